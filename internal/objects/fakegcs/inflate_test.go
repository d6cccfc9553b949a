package fakegcs

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/objects"
)

// gzipped compresses b; writes to a bytes.Buffer do not fail.
func gzipped(b []byte) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.String()
}

// TestGzipRequestBodyIsBounded: an upload sent with Content-Encoding: gzip
// is stored inflated, or refused with 413 beyond the ingest's bound.
func TestGzipRequestBodyIsBounded(t *testing.T) {
	var csv strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&csv, "P-%06d,ES,2026-03-14T17:%02d:00Z,12.50\n", i, i%60)
	}
	bomb := gzipped(make([]byte, 64<<20)) // about 64 KiB that inflate 1,000 times
	for _, backend := range backends {
		tests := []struct {
			name, body string
			wantCode   int
			want       string // the stored object, when 200
		}{
			{name: "a compressed CSV is stored inflated", body: gzipped([]byte(csv.String())), wantCode: http.StatusOK, want: csv.String()},
			{name: "a zip bomb is refused", body: bomb, wantCode: http.StatusRequestEntityTooLarge},
			{name: "a body that is not gzip", body: "a,b\n", wantCode: http.StatusBadRequest},
		}
		for _, tt := range tests {
			t.Run(backend.name+"/"+tt.name, func(t *testing.T) {
				l, g := startFS(t, backend.dir(t))
				rec := serveFake(l, http.MethodPost, "/upload/storage/v1/b/"+bucket+"/o?uploadType=media&name=x.csv",
					map[string]string{"Content-Encoding": "gzip", "Content-Type": "text/csv"}, tt.body)
				t.Logf("%d bytes sent: %d %.200s", len(tt.body), rec.Code, rec.Body)
				if rec.Code != tt.wantCode {
					t.Fatalf("status %d, want %d", rec.Code, tt.wantCode)
				}
				if tt.wantCode == http.StatusRequestEntityTooLarge && !strings.Contains(apiMessage(rec), "expands more than") {
					t.Errorf("refusal %q does not say why", apiMessage(rec))
				}
				if tt.wantCode != http.StatusOK {
					if _, err := g.Stat(t.Context(), bucket, "x.csv"); !errors.Is(err, objects.ErrNotFound) {
						t.Errorf("Stat after a refused upload = %v, want ErrNotFound", err)
					}
					return
				}
				if got := readAll(t, g, "x.csv"); got != tt.want {
					t.Errorf("stored %d bytes, want the %d bytes inflated", len(got), len(tt.want))
				}
			})
		}
	}
}

// The request bodies' bound is the ingest's for stored .gz objects.
func TestGzipBoundIsTheIngests(t *testing.T) {
	if maxExpansion != ingest.MaxExpansion {
		t.Errorf("maxExpansion = %d, ingest.MaxExpansion = %d", maxExpansion, ingest.MaxExpansion)
	}
}
