package bigquery

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// pane builds a row of ventas_hora_pais_paneles whose ID is its identity.
func pane(t testing.TB, pais string, index int64, importe string) warehouse.Row {
	start := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	return warehouse.Row{
		ID: fmt.Sprintf("ventas_hora_pais-%d-%s-%d", start.Unix(), pais, index),
		Values: []warehouse.Value{
			warehouse.StringValue("ventas_hora_pais"),
			warehouse.TimeValue(start),
			warehouse.TimeValue(start.Add(time.Hour)),
			warehouse.StringValue(pais),
			warehouse.DecValue(dec(t, importe)),
			warehouse.IntValue(3),
			warehouse.IntValue(7),
			warehouse.IntValue(index),
			warehouse.StringValue("ON_TIME"),
			warehouse.StringValue(warehouse.Accumulating),
			warehouse.TimeValue(start.Add(time.Hour + time.Minute)),
			warehouse.TimeValue(start.Add(time.Hour + 2*time.Minute)),
		},
	}
}

func TestAppend(t *testing.T) {
	es, fr := pane(t, "ES", 0, "250.10"), pane(t, "FR", 0, "99.99")
	many := make([]warehouse.Row, 1201)
	for i := range many {
		many[i] = pane(t, "ES", int64(i), "1")
	}
	bad := pane(t, "PT", 0, "5")
	bad.Values[8] = warehouse.NullValue() // timing is REQUIRED

	tests := []struct {
		name      string
		setup     func(f *bqfake.Fake)
		batches   [][]warehouse.Row // successive Append calls
		wantErr   string
		wantCalls int
		wantIDs   []string // insertIds stored, sorted
	}{
		{
			name:      "rows carry their IDs as insertId",
			batches:   [][]warehouse.Row{{es, fr}},
			wantCalls: 1,
			wantIDs:   []string{es.ID, fr.ID},
		},
		{
			name:      "a retried call adds nothing twice",
			batches:   [][]warehouse.Row{{es, fr}, {es, fr}},
			wantCalls: 2,
			wantIDs:   []string{es.ID, fr.ID},
		},
		{
			name:      "503 is retried with back-off",
			setup:     func(f *bqfake.Fake) { f.Fault("tabledata.insertAll", http.StatusServiceUnavailable, false) },
			batches:   [][]warehouse.Row{{es}},
			wantCalls: 2,
			wantIDs:   []string{es.ID},
		},
		{
			name:      "503 after the rows landed: the retry is deduplicated by insertId",
			setup:     func(f *bqfake.Fake) { f.Fault("tabledata.insertAll", http.StatusInternalServerError, true) },
			batches:   [][]warehouse.Row{{es, fr}},
			wantCalls: 2,
			wantIDs:   []string{es.ID, fr.ID},
		},
		{
			name:      "large calls are split into requests of 500 rows",
			batches:   [][]warehouse.Row{many},
			wantCalls: 3,
		},
		{
			name:      "no rows, no request",
			batches:   [][]warehouse.Row{nil},
			wantCalls: 0,
		},
		{
			name:      "row without an ID is refused before any request",
			batches:   [][]warehouse.Row{{es, {Values: fr.Values}}},
			wantErr:   "row without an ID",
			wantCalls: 0,
		},
		{
			name:      "NULL in a REQUIRED column names the row",
			batches:   [][]warehouse.Row{{es, bad}},
			wantErr:   "row " + bad.ID + ": column timing is REQUIRED",
			wantCalls: 0,
		},
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
			if calls := countCalls(e.fake, "tabledata.insertAll "); calls != tc.wantCalls {
				t.Errorf("insertAll requests: %d, want %d", calls, tc.wantCalls)
			}
			if tc.wantIDs != nil {
				if diff := cmp.Diff(tc.wantIDs, e.fake.InsertIDs(warehouse.VentasHoraPaisPaneles)); diff != "" {
					t.Errorf("stored insertIds (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestAppendRejectedRow: a row BigQuery rejects fails the call with its ID
// (not the hash a long one is sent as) and reason; the rest of the request
// is "stopped", and nothing lands.
func TestAppendRejectedRow(t *testing.T) {
	e := newTestEnv(t)
	// A value the adapter's own checks let through but BigQuery refuses:
	// the fake knows the table with pais as INT64, so "34" passes and "FR"
	// does not.
	ok := pane(t, "34", 0, "1")
	rejected := longPane(t, "FR")
	tb := mustTable(t, warehouse.VentasHoraPaisPaneles)
	tb.Schema[tb.Column("pais")].Type = warehouse.Int64
	e.fake.SetTable(tb)

	err := e.w.Append(context.Background(), warehouse.VentasHoraPaisPaneles, []warehouse.Row{ok, rejected})
	checkErr(t, err, "2 rows rejected: row "+rejected.ID+": invalid: field pais: Could not parse 'FR' as INT64")
	checkErr(t, err, "row "+ok.ID+": stopped: ")
	if n := len(e.fake.Rows(warehouse.VentasHoraPaisPaneles)); n != 0 {
		t.Errorf("%d rows landed, want 0", n)
	}
}

func TestAppendStoredValues(t *testing.T) {
	e := newTestEnv(t)
	if err := e.w.Append(context.Background(), warehouse.VentasHoraPaisPaneles, []warehouse.Row{pane(t, "ES", 2, "250.10")}); err != nil {
		t.Fatal(err)
	}
	rows := e.fake.Rows(warehouse.VentasHoraPaisPaneles)
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	got := map[string]string{}
	for k, v := range rows[0] {
		got[k] = fmt.Sprint(v)
	}
	want := map[string]string{
		"aggregation": "ventas_hora_pais", "window_start": "2026-03-14T10:00:00.000000Z", "window_end": "2026-03-14T11:00:00.000000Z",
		"pais": "ES", "importe": "2501/10", "pedidos": "3", "unidades": "7", "pane_index": "2", "timing": "ON_TIME",
		"accumulation": "ACCUMULATING", "watermark": "2026-03-14T11:01:00.000000Z", "emitted_at": "2026-03-14T11:02:00.000000Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored row (-want +got):\n%s", diff)
	}
}
