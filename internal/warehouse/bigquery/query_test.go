package bigquery

import (
	"context"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"
	"github.com/google/go-cmp/cmp"
	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

func TestQuery(t *testing.T) {
	const sql = "SELECT fecha, sku, unidades, importe, lineas, ingested_at FROM ventas_diarias_sku ORDER BY sku"
	fields := []*bq.TableFieldSchema{{Name: "fecha", Type: "DATE"}, {Name: "sku", Type: "STRING"}, {Name: "unidades", Type: "INTEGER"},
		{Name: "importe", Type: "NUMERIC"}, {Name: "lineas", Type: "INTEGER"}, {Name: "ingested_at", Type: "TIMESTAMP"}}
	recorded := bqfake.Result{Fields: fields, Rows: [][]any{
		{"2026-03-14", "SKU-ABC", "3", "269.7", "2", "2026-03-14T09:30:15.123456Z"},
		{"2026-03-14", "SKU-DEF", "1", "0.000000001", "1", "2026-03-14T09:30:15Z"},
		{"2026-03-15", "SKU-GHI", "-2", "-12", "1", nil},
		{nil, nil, nil, nil, nil, nil},
		{"2026-03-16", "", "9223372036854775807", "99999999999999999999999999999.999999999", "0", "1969-12-31T23:59:59.999999Z"},
	}}
	want := warehouse.Result{Columns: []string{"fecha", "sku", "unidades", "importe", "lineas", "ingested_at"}, Rows: [][]string{
		{"2026-03-14", "SKU-ABC", "3", "269.7", "2", "2026-03-14T09:30:15.123456Z"},
		{"2026-03-14", "SKU-DEF", "1", "0.000000001", "1", "2026-03-14T09:30:15Z"},
		{"2026-03-15", "SKU-GHI", "-2", "-12", "1", "NULL"},
		{"NULL", "NULL", "NULL", "NULL", "NULL", "NULL"},
		{"2026-03-16", "", "9223372036854775807", "99999999999999999999999999999.999999999", "0", "1969-12-31T23:59:59.999999Z"},
	}}
	empty := "SELECT sku FROM opiniones WHERE puntuacion > 5"
	skus := bqfake.Result{Fields: []*bq.TableFieldSchema{{Name: "sku", Type: "STRING"}}}
	tests := []struct {
		name        string
		sql         string
		recorded    bqfake.Result
		pageSize    int
		want        warehouse.Result
		wantFetches int // jobs.getQueryResults calls after jobs.query
	}{
		{name: "one page", sql: sql, recorded: recorded, pageSize: 1000, want: want},
		{name: "pages of two rows through getQueryResults", sql: sql, recorded: recorded, pageSize: 2, want: want, wantFetches: 2},
		// The client asks getQueryResults again when the first page holds no rows.
		{name: "no rows", sql: empty, recorded: skus, pageSize: 1000, want: warehouse.Result{Columns: []string{"sku"}, Rows: [][]string{}}, wantFetches: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.fake.Record(tc.sql, tc.recorded)
			e.fake.SetPageSize(tc.pageSize)
			got, err := e.w.Query(context.Background(), tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if fetches := len(calls(e.fake, "jobs.getQueryResults")); fetches != tc.wantFetches {
				t.Errorf("getQueryResults calls: %d, want %d (%v)", fetches, tc.wantFetches, e.fake.Calls())
			}
		})
	}
}

func TestQueryRefusesWrites(t *testing.T) {
	tests := []struct{ name, sql, wantErr string }{
		{"DELETE", "DELETE FROM lineas_pedido WHERE TRUE", "only a single SELECT statement is allowed, this is DELETE"},
		{"DDL", "DROP TABLE lineas_pedido", "this is DROP"},
		{"script hiding a write", "SELECT 1; DELETE FROM lineas_pedido WHERE TRUE", "this is SCRIPT"},
		{"SQL BigQuery cannot compile", "SELEC 1", "this is SELEC"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			_, err := e.w.Query(context.Background(), tc.sql)
			checkErr(t, err, tc.wantErr)
			if slices.Contains(e.fake.Calls(), "jobs.query") {
				t.Errorf("the statement ran: %v", e.fake.Calls())
			}
		})
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		in   bigquery.Value
		want string
	}{
		{name: "NULL", in: nil, want: "NULL"},
		{name: "NUMERIC trailing zeros dropped", in: big.NewRat(17980, 100), want: "179.8"},
		{name: "NUMERIC integer", in: big.NewRat(-12, 1), want: "-12"},
		{name: "NUMERIC small negative", in: big.NewRat(-5, 100), want: "-0.05"},
		{name: "BIGNUMERIC 38 digits", in: new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)),
			want: "0." + strings.Repeat("0", 37) + "1"},
		{name: "DATE", in: civil.Date{Year: 2026, Month: 2, Day: 28}, want: "2026-02-28"},
		{name: "TIMESTAMP in UTC", in: time.Date(2026, 3, 14, 11, 0, 0, 500000000, time.FixedZone("CET", 3600)), want: "2026-03-14T10:00:00.5Z"},
		{name: "INT64", in: int64(-7), want: "-7"},
		{name: "BOOL", in: true, want: "true"},
		{name: "FLOAT64", in: 0.1, want: "0.1"},
		{name: "TIME", in: civil.Time{Hour: 9, Minute: 5}, want: "09:05:00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, render(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
