package ingest

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// TestQuarantineNameFits: quarantine names of landing names of every length
// fit Cloud Storage and the local fake, are stable and differ per source.
func TestQuarantineNameFits(t *testing.T) {
	feeds, err := contract.Default()
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "cuarentena/"
	check := func(t *testing.T, feed, landing string, gen int64) string {
		t.Helper()
		got := quarantineName(prefix, feed, Object{Name: landing, Generation: gen})
		if err := objname.Local(got); err != nil {
			t.Fatalf("quarantine name of %q: %v", landing, err)
		}
		for seg := range strings.SplitSeq(got, "/") {
			if len(seg) > maxSegmentBytes {
				t.Fatalf("quarantine name of %q has a %d-byte segment", landing, len(seg))
			}
		}
		if !strings.HasPrefix(got, prefix+feed+"/") || !strings.HasSuffix(got, ".csv") {
			t.Fatalf("quarantine name %q is not under %s%s/ or not .csv", got, prefix, feed)
		}
		if again := quarantineName(prefix, feed, Object{Name: landing, Generation: gen}); again != got {
			t.Fatalf("quarantine name of %q is not stable: %q then %q", landing, got, again)
		}
		return got
	}

	tests := []struct {
		name    string
		landing string
		want    string // "" when only the rules are checked
	}{
		{name: "short name kept readable", landing: "exportaciones/2026/03/14/pedidos-erp.csv", want: "cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.g1773500000000000.csv"},
		{name: "gzip", landing: "exportaciones/2026/03/14/pedidos-erp.csv.gz", want: "cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.g1773500000000000.csv"},
		{name: "247 q", landing: "exportaciones/2026/03/14/" + strings.Repeat("q", 247) + ".csv"},
		{name: "segment of 255 bytes", landing: "exportaciones/2026/03/14/" + strings.Repeat("q", 251) + ".csv"},
		{name: "1024 bytes of two-byte runes", landing: "exportaciones/2026/03/14/" + strings.Repeat("ñ", (1024-29)/2) + ".csv"},
		{name: "1024 bytes of four-byte runes", landing: "exportaciones/2026/03/14/" + strings.Repeat("😀", (1024-29)/4) + ".csv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			feed, ok := feeds.Match(tt.landing)
			if !ok {
				t.Fatalf("no feed accepts %q", tt.landing)
			}
			got := check(t, feed.Name(), tt.landing, 1773500000000000)
			if tt.want != "" && got != tt.want {
				t.Errorf("quarantine name = %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("random names the contracts accept", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 2))
		alphabet := []rune{'q', 'Q', '.', '-', '_', ' ', 'ñ', '€', '😀', '~'}
		seen := map[string]string{}
		for range 2000 {
			var sb strings.Builder
			sb.WriteString("exportaciones/2026/03/14/")
			ext := [...]string{".csv", ".csv.gz"}[rng.IntN(2)]
			limit := rng.IntN(objname.MaxObjectBytes-sb.Len()-len(ext)) + 1
			for sb.Len() < limit {
				r := alphabet[rng.IntN(len(alphabet))]
				if sb.Len()+utf8.RuneLen(r) > limit {
					break
				}
				sb.WriteRune(r)
			}
			landing := sb.String() + ext
			feed, ok := feeds.Match(landing)
			if !ok || objname.Object(landing) != nil {
				continue
			}
			got := check(t, feed.Name(), landing, rng.Int64())
			if other, dup := seen[got]; dup && other != landing {
				t.Fatalf("%q and %q share the quarantine name %q", other, landing, got)
			}
			seen[got] = landing
		}
		if len(seen) < 1000 {
			t.Fatalf("only %d names checked", len(seen))
		}
	})
}
