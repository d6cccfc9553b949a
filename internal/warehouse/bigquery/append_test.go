package bigquery

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// pane builds a row of ventas_hora_pais_paneles whose ID is its identity.
func pane(t testing.TB, pais string, index int64, importe string) warehouse.Row {
	start := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	return warehouse.Row{ID: fmt.Sprintf("ventas_hora_pais-%d-%s-%d", start.Unix(), pais, index), Values: []warehouse.Value{
		warehouse.StringValue("ventas_hora_pais"), warehouse.TimeValue(start), warehouse.TimeValue(start.Add(time.Hour)),
		warehouse.StringValue(pais), warehouse.DecValue(dec(t, importe)), warehouse.IntValue(3), warehouse.IntValue(7),
		warehouse.IntValue(index), warehouse.StringValue("ON_TIME"), warehouse.StringValue(warehouse.Accumulating),
		warehouse.TimeValue(start.Add(time.Hour + time.Minute)), warehouse.TimeValue(start.Add(time.Hour + 2*time.Minute)),
	}}
}

func TestAppend(t *testing.T) {
	es, fr, long := pane(t, "ES", 0, "250.10"), pane(t, "FR", 0, "99.99"), longPane(t, "ES")
	many := make([]warehouse.Row, 1201)
	for i := range many {
		many[i] = pane(t, "ES", int64(i), "1")
	}
	bad := pane(t, "PT", 0, "5")
	bad.Values[8] = warehouse.NullValue() // timing is REQUIRED
	// Known to the fake as INT64, pais "34" passes the adapter and BigQuery, "FR" only the adapter.
	intPais := mustTable(t, warehouse.VentasHoraPaisPaneles)
	ok, rejected := pane(t, "34", 0, "1"), longPane(t, "FR")
	intPais.Schema[intPais.Column("pais")].Type = warehouse.Int64
	tests := []struct {
		name      string
		setup     func(f *bqfake.Fake)
		batches   [][]warehouse.Row // successive Append calls
		wantErr   string
		wantCalls int
		wantIDs   []string // insertIds stored, sorted
		wantRows  int
	}{
		{name: "rows carry their IDs as insertId", batches: [][]warehouse.Row{{es, fr}}, wantCalls: 1, wantIDs: []string{es.ID, fr.ID}, wantRows: 2},
		{name: "a retried call adds nothing twice", batches: [][]warehouse.Row{{es, fr}, {es, fr}}, wantCalls: 2, wantIDs: []string{es.ID, fr.ID}, wantRows: 2},
		{name: "an ID over 128 characters is sent hashed, and deduplicated", batches: [][]warehouse.Row{{long}, {long}}, wantCalls: 2,
			wantIDs: []string{insertID(long.ID)}, wantRows: 1},
		{name: "503 is retried with back-off", setup: func(f *bqfake.Fake) { f.Fault("tabledata.insertAll", http.StatusServiceUnavailable, false) },
			batches: [][]warehouse.Row{{es}}, wantCalls: 2, wantIDs: []string{es.ID}, wantRows: 1},
		{name: "503 after the rows landed: the retry is deduplicated by insertId", batches: [][]warehouse.Row{{es, fr}}, wantCalls: 2,
			setup:   func(f *bqfake.Fake) { f.Fault("tabledata.insertAll", http.StatusInternalServerError, true) },
			wantIDs: []string{es.ID, fr.ID}, wantRows: 2},
		{name: "large calls are split into requests of 500 rows", batches: [][]warehouse.Row{many}, wantCalls: 3, wantRows: 1201},
		{name: "no rows, no request", batches: [][]warehouse.Row{nil}},
		{name: "row without an ID is refused before any request", batches: [][]warehouse.Row{{es, {Values: fr.Values}}}, wantErr: "row without an ID"},
		{name: "NULL in a REQUIRED column names the row", batches: [][]warehouse.Row{{es, bad}}, wantErr: "row " + bad.ID + ": column timing is REQUIRED"},
		// Named by its ID, not the hash a long one is sent as; the rest of
		// the request is "stopped", and nothing lands.
		{name: "a row BigQuery rejects fails the call with its ID and reason",
			setup:   func(f *bqfake.Fake) { f.SetTable(intPais) },
			batches: [][]warehouse.Row{{ok, rejected}}, wantCalls: 1,
			wantErr: "2 rows rejected: row " + rejected.ID +
				": invalid: field pais: Could not parse 'FR' as INT64, row " + ok.ID + ": stopped: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.setup != nil {
				tc.setup(e.fake)
			}
			var err error
			for _, b := range tc.batches {
				if err = e.w.Append(context.Background(), warehouse.VentasHoraPaisPaneles, b); err != nil {
					break
				}
			}
			checkErr(t, err, tc.wantErr)
			if n := len(calls(e.fake, "tabledata.insertAll")); n != tc.wantCalls {
				t.Errorf("insertAll requests: %d, want %d", n, tc.wantCalls)
			}
			if tc.wantIDs != nil {
				if diff := cmp.Diff(tc.wantIDs, e.fake.InsertIDs(warehouse.VentasHoraPaisPaneles)); diff != "" {
					t.Errorf("stored insertIds (-want +got):\n%s", diff)
				}
			}
			if n := len(e.fake.Rows(warehouse.VentasHoraPaisPaneles)); n != tc.wantRows {
				t.Errorf("%d rows, want %d", n, tc.wantRows)
			}
		})
	}
}

// longPane is a pane whose identity is longer than an insertId may be, as
// a long aggregation name or key would make it.
func longPane(t *testing.T, pais string) warehouse.Row {
	r := pane(t, pais, 0, "1")
	r.ID = strings.Repeat("ventas_hora_pais_por_canal_y_region-", 4) + r.ID
	return r
}
