package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

// BenchmarkSnapshot measures one refresh of the page on the embedded
// engines (what each open page costs the local server every Refresh):
// a week of hourly windows for 20 countries with 3 panes each in DuckDB, of
// which the newest 24 windows are charted, and 50 ledger records.
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	wh, err := duckdb.Open("", duckdb.Options{TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { wh.Close() })
	const days, countries, panes = 7, 20, 3
	start := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	var rows [][]warehouse.Value
	for h := range days * 24 {
		ws := start.Add(time.Duration(h) * time.Hour)
		for c := range countries {
			pais := string(rune('A'+c/26)) + string(rune('A'+c%26))
			for p := range panes {
				timing := []string{"EARLY", "ON_TIME", "LATE"}[p]
				rows = append(rows, []warehouse.Value{
					warehouse.StringValue("ventas_hora_pais"), warehouse.TimeValue(ws), warehouse.TimeValue(ws.Add(time.Hour)),
					warehouse.StringValue(pais), warehouse.DecValue(mustDec(fmt.Sprintf("%d.%02d", 100*(p+1)+c, h%100))),
					warehouse.IntValue(int64(p + 1)), warehouse.IntValue(int64(2 * (p + 1))), warehouse.IntValue(int64(p)),
					warehouse.StringValue(timing), warehouse.StringValue("ACCUMULATING"),
					warehouse.TimeValue(ws), warehouse.TimeValue(ws.Add(time.Hour)),
				})
			}
		}
	}
	// A bulk load, not Append: the outbox's row-by-row appends would take
	// longer than the benchmark.
	if _, err := wh.Load(ctx, warehouse.Load{ID: "bench-panes", Table: warehouse.VentasHoraPaisPaneles, Rows: &sliceRows{rows: rows, i: -1}}); err != nil {
		b.Fatal(err)
	}
	store, err := boltstore.Open(filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	led, err := ledger.New(store, ledger.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		key := ledger.Key{Bucket: "alpinashop-catalogo", Object: fmt.Sprintf("exportaciones/f%03d.csv", i), Generation: int64(i + 1)}
		c, err := led.Claim(ctx, key, key.Object, "bench", start)
		if err != nil {
			b.Fatal(err)
		}
		rec := c.Record
		rec.State, rec.Counts = ledger.Done, ledger.Counts{Read: 10, Loaded: 9, Quarantined: 1}
		if err := led.Finish(ctx, rec, start); err != nil {
			b.Fatal(err)
		}
	}
	h := dashboard.Handler(dashboard.Source{
		Warehouse: wh, Ledger: led, Watermarks: dashboard.StoreWatermarks{Store: store},
		Now: func() time.Time { return start.Add(days * 24 * time.Hour) },
	})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("HTTP %d", rec.Code)
		}
	}
	b.StopTimer()
	snap := dashboard.Take(ctx, dashboard.Source{Warehouse: wh, Ledger: led, Watermarks: dashboard.StoreWatermarks{Store: store}})
	if len(snap.Bars) != 24*countries || len(snap.Files) != dashboard.DefaultFiles || snap.Errors != nil {
		b.Fatalf("snapshot has %d bars, %d files, errors %v; want %d, %d, none", len(snap.Bars), len(snap.Files), snap.Errors, 24*countries, dashboard.DefaultFiles)
	}
	for _, bar := range snap.Bars {
		if bar.Timing != "LATE" || bar.PaneIndex != 2 {
			b.Fatalf("bar %+v is not the latest pane", bar)
		}
	}
}

type sliceRows struct {
	rows [][]warehouse.Value
	i    int
}

func (s *sliceRows) Next() bool             { s.i++; return s.i < len(s.rows) }
func (s *sliceRows) Row() []warehouse.Value { return s.rows[s.i] }
func (s *sliceRows) Err() error             { return nil }
