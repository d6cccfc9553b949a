package ingest_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
)

// TestRefreshOverflowEndsDone: a file whose rows take a day's sum out of
// range ends DONE with every other group aggregated, each sum left out
// logged as "refresh overflow", and so does the next file of that day.
func TestRefreshOverflowEndsDone(t *testing.T) {
	var logs bytes.Buffer // Ingest logs on its caller's goroutine
	r := newRigWith(t, nil, logging.New(&logs, 0))
	const header = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n"
	maxPrice := `"99999999999999999999999999999,999999999"`
	a := r.ingest(r.upload("exportaciones/2026/03/14/a.csv", header+
		"P-1,1,2026-03-14,SKU-X,1,"+maxPrice+",,ES\n"+
		"P-1,2,2026-03-14,SKU-X,1,\"1,00\",,ES\n"+
		"P-2,1,2026-03-14,SKU-H,1,"+maxPrice+",,ES\n"+
		"P-2,2,2026-03-14,SKU-H,1,"+maxPrice+",,ES\n"+
		"P-3,1,2026-03-14,SKU-Z,9000000000000000000,\"0,000000001\",,ES\n"+
		"P-3,2,2026-03-14,SKU-Z,9000000000000000000,\"0,000000001\",,ES\n"+
		"P-4,1,2026-03-14,SKU-Y,2,\"10,00\",,ES\n"))
	b := r.ingest(r.upload("exportaciones/2026/03/14/b.csv", header+
		"P-5,1,2026-03-14,SKU-Y,1,\"0,50\",,ES\n"))

	sums := r.query("SELECT CAST(fecha AS VARCHAR), sku, unidades, CAST(importe AS VARCHAR), lineas " +
		"FROM ventas_diarias_sku ORDER BY sku")
	want := [][]string{{"2026-03-14", "SKU-Y", "3", "20.500000000", "2"}}
	if diff := cmp.Diff(want, sums); diff != "" {
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
	got := []any{a.State, a.Counts.Loaded, a.Reason, b.State, b.Reason}
	wantRecords := []any{ledger.Done, int64(7), wantNote, ledger.Done, wantNote}
	if diff := cmp.Diff(wantRecords, got); diff != "" {
		t.Errorf("a.csv: state, rows loaded, reason; b.csv: state, reason (-want +got):\n%s", diff)
	}
}
