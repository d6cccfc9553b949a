package ingest_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
)

// TestRefreshOverflowEndsDone: a file whose rows take a day's sum out of
// range ends DONE with every other group aggregated, each sum left out
// logged as "refresh overflow", and so does the next file of that day.
func TestRefreshOverflowEndsDone(t *testing.T) {
	p := ingesttest.NewParts(t, ingesttest.Landing, ingesttest.Quarantine)
	var logs bytes.Buffer // Ingest logs on its caller's goroutine
	now := func() time.Time { return time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC) }
	svc, err := ingest.New(p.GCS, p.Ledger, p.Warehouse, p.Feeds, ingest.Config{QuarantineBucket: ingesttest.Quarantine, QuarantinePrefix: "cuarentena/", MaxRecordBytes: 4096}, now, logging.New(&logs, 0))
	if err != nil {
		t.Fatal(err)
	}
	ingestFile := func(name, content string) ledger.Record {
		t.Helper()
		a := ingesttest.Put(t, p.GCS, ingesttest.Landing, name, content, nil)
		rec, err := svc.Ingest(context.Background(), ingest.Object{Bucket: ingesttest.Landing, Name: name, Generation: a.Generation, MD5: a.MD5, Size: a.Size})
		if err != nil {
			t.Fatalf("Ingest %s: %v", name, err)
		}
		return rec
	}
	const header = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n"
	maxPrice := `"99999999999999999999999999999,999999999"`
	a := ingestFile("exportaciones/2026/03/14/a.csv", header+
		"P-1,1,2026-03-14,SKU-X,1,"+maxPrice+",,ES\n"+
		"P-1,2,2026-03-14,SKU-X,1,\"1,00\",,ES\n"+
		"P-2,1,2026-03-14,SKU-H,1,"+maxPrice+",,ES\n"+
		"P-2,2,2026-03-14,SKU-H,1,"+maxPrice+",,ES\n"+
		"P-3,1,2026-03-14,SKU-Z,9000000000000000000,\"0,000000001\",,ES\n"+
		"P-3,2,2026-03-14,SKU-Z,9000000000000000000,\"0,000000001\",,ES\n"+
		"P-4,1,2026-03-14,SKU-Y,2,\"10,00\",,ES\n")
	if a.State != ledger.Done || a.Counts.Loaded != 7 {
		t.Fatalf("a.csv: %s, %d rows loaded (reason %q), want DONE with 7", a.State, a.Counts.Loaded, a.Reason)
	}
	b := ingestFile("exportaciones/2026/03/14/b.csv", header+"P-5,1,2026-03-14,SKU-Y,1,\"0,50\",,ES\n")
	if b.State != ledger.Done {
		t.Fatalf("b.csv: %s (reason %q), want DONE", b.State, b.Reason)
	}

	got := ingesttest.Query(t, p.Warehouse, "SELECT CAST(fecha AS VARCHAR), sku, unidades, CAST(importe AS VARCHAR), lineas FROM ventas_diarias_sku ORDER BY sku")
	want := [][]string{{"2026-03-14", "SKU-Y", "3", "20.500000000", "2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ventas_diarias_sku (-want +got):\n%s", diff)
	}

	type overflow struct{ Severity, Aggregate, Date, SKU, Column, Sum string }
	var lines []overflow
	for _, l := range logLines(t, logs.String(), "refresh overflow") {
		s := func(k string) string { v, _ := l[k].(string); return v }
		lines = append(lines, overflow{s("severity"), s("aggregate"), s("date"), s("sku"), s("column"), s("sum")})
	}
	once := []overflow{
		{"ERROR", "ventas_diarias_sku", "2026-03-14", "SKU-H", "importe", "199999999999999999999999999999.999999998"},
		{"ERROR", "ventas_diarias_sku", "2026-03-14", "SKU-X", "importe", "100000000000000000000000000000.999999999"},
		{"ERROR", "ventas_diarias_sku", "2026-03-14", "SKU-Z", "unidades", "18000000000000000000"},
	}
	if diff := cmp.Diff(append(once, once...), lines); diff != "" {
		t.Errorf(`"refresh overflow" lines, one per sum and file (-want +got):\n%s`, diff)
	}

	// The DONE records name the sums left out, as of their refresh.
	const wantNote = `aggregate ventas_diarias_sku: sums out of range (3), their groups left out: ` +
		`2026-03-14 sku="SKU-H" importe=199999999999999999999999999999.999999998; ` +
		`2026-03-14 sku="SKU-X" importe=100000000000000000000000000000.999999999; ` +
		`2026-03-14 sku="SKU-Z" unidades=18000000000000000000`
	if diff := cmp.Diff([]string{wantNote, wantNote}, []string{a.Reason, b.Reason}); diff != "" {
		t.Errorf("reasons of a.csv and b.csv (-want +got):\n%s", diff)
	}
}
