//go:build cgo

package remote

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

// BenchmarkLoad loads the 800,000-row order file into an on-disk DuckDB
// directly and through Client and Handler over loopback HTTP, to show what
// the remote hop costs. Both ends run in this one process here; with
// cmd/server and `alpipe serve` they are two.
func BenchmarkLoad(b *testing.B) {
	for _, bc := range []struct {
		name   string
		remote bool
	}{{"direct", false}, {"remote", true}} {
		b.Run(bc.name, func(b *testing.B) {
			wh, err := duckdb.Open(filepath.Join(b.TempDir(), "wh.duckdb"), duckdb.Options{TempDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer wh.Close()
			var w Backend = wh
			if bc.remote {
				srv := httptest.NewServer(http.StripPrefix("/w", Handler(wh)))
				defer srv.Close()
				if w, err = New(srv.URL+"/w", nil); err != nil {
					b.Fatal(err)
				}
			}
			warehousetest.BenchmarkLoad(b, w)
		})
	}
}
