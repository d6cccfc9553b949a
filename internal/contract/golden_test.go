package contract

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenLimit keeps the over-long fixture small.
const goldenLimit = 2048

// outcome is what one file gives, as the ingester accounts for it.
type outcome struct {
	FileReason string // the file is refused as a whole
	Drift      Drift
	Read       int
	Valid      int
	Rejects    map[string]int
	lines      []string
}

// process runs a file through the reader and a feed's contract.
func process(t *testing.T, f *Feed, src io.Reader) outcome {
	t.Helper()
	// As the ingester does: the delimiter is sniffed from the header line.
	br := bufio.NewReaderSize(src, 8000)
	head, _ := br.Peek(8000)
	r := record.NewReader(br, record.Options{MaxRecordBytes: goldenLimit, Comma: f.SniffDelimiter(head), Quote: f.Quote()})
	o := outcome{Rejects: map[string]int{}}
	header, err := r.Next()
	switch {
	case errors.Is(err, io.EOF):
		o.FileReason = "empty file: no header row"
		return o
	case err != nil:
		t.Fatal(err)
	case header.Problem != "":
		o.FileReason = "unreadable header: " + header.Problem
	}
	var b *Binding
	if o.FileReason == "" {
		var fe *FileError
		b, err = f.Bind(header.Fields)
		if errors.As(err, &fe) {
			o.FileReason = fe.Reason
			o.Drift = fe.Drift
		} else if err != nil {
			t.Fatal(err)
		} else {
			o.Drift = b.Drift()
		}
	}
	out := make([]schema.Value, f.Width())
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return o
		}
		if err != nil {
			t.Fatal(err)
		}
		o.Read++
		var rej Reject
		switch {
		case rec.Problem != "":
			rej = Unreadable(rec.Problem)
		case b == nil:
			rej = Reject{"file_rejected", o.FileReason}
		default:
			rej = b.Validate(rec.Fields, out)
		}
		if rej.OK() {
			o.Valid++
			o.lines = append(o.lines, fmt.Sprintf("line %d ok %q", rec.Line, render(f, out)))
			continue
		}
		o.Rejects[rej.Code]++
		o.lines = append(o.lines, fmt.Sprintf("line %d reject %s: %s", rec.Line, rej.Code, rej.Detail))
	}
}

func (o outcome) String() string {
	var sb strings.Builder
	if o.FileReason != "" {
		fmt.Fprintf(&sb, "file rejected: %s\n", o.FileReason)
	}
	if !o.Drift.Empty() {
		fmt.Fprintf(&sb, "drift: added %q, missing %q\n", o.Drift.Added, o.Drift.Missing)
	}
	for _, l := range o.lines {
		sb.WriteString(l + "\n")
	}
	fmt.Fprintf(&sb, "read=%d valid=%d rejected=%d\n", o.Read, o.Valid, o.Read-o.Valid)
	for _, c := range slices.Sorted(maps.Keys(o.Rejects)) {
		fmt.Fprintf(&sb, "  %s=%d\n", c, o.Rejects[c])
	}
	return sb.String()
}

// testRegistry is the embedded feeds plus the test-only ones in
// testdata/feeds.
func testRegistry(t testing.TB) *Registry {
	t.Helper()
	files := map[string][]byte{}
	for _, dir := range []string{"feeds", "testdata/feeds"} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if files[p], err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	return mustParse(t, files)
}

// TestGolden runs every fixture in testdata/<feed>/ through its feed and
// compares the outcome with <fixture>.golden.
func TestGolden(t *testing.T) {
	reg := testRegistry(t)
	n := 0
	for _, f := range reg.Feeds() {
		paths, err := filepath.Glob(filepath.Join("testdata", f.Name(), "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, ".golden") {
				continue
			}
			n++
			t.Run(f.Name()+"/"+filepath.Base(p), func(t *testing.T) {
				file, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer file.Close()
				got := process(t, f, file).String()
				golden := p + ".golden"
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", golden, diff)
				}
			})
		}
	}
	if n < 20 {
		t.Fatalf("only %d fixtures found", n)
	}
}

// TestSeeds pins the demo's seed files to the fixtures TestGolden runs and
// to the feed their object names match.
func TestSeeds(t *testing.T) {
	reg := mustDefault(t)
	for fixture, object := range map[string]string{
		"lineas_pedido/seed_pedidos_erp.csv":    "exportaciones/2026/03/14/pedidos-erp.csv",
		"opiniones/seed_opiniones_marzo.csv":    "exportaciones/2026/03/opiniones-marzo.csv",
		"lineas_pedido/demo_pedidos_sucios.csv": "exportaciones/2026/03/15/pedidos-erp.csv",
	} {
		want, err := os.ReadFile(filepath.Join("testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("../../testdata", object))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s differs from testdata/%s (%v)", object, fixture, err)
		}
		if f, ok := reg.Match(object); !ok || f.Name() != path.Dir(fixture) {
			t.Errorf("object %s does not match feed %s", object, path.Dir(fixture))
		}
	}
}
