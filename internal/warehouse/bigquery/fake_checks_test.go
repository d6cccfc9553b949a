package bigquery

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// TestFakeChecksRequests shows that bqfake refuses what BigQuery refuses,
// and answers and records what breaks a rule of this codebase, so the
// adapter's passing tests mean something. Each case sends a request through
// the real client, bypassing the adapter's own checks.
func TestFakeChecksRequests(t *testing.T) {
	lineasTable := mustTable(t, warehouse.LineasPedido)
	query := func(id string, edit queryEdit) func(context.Context, *testEnv) error {
		return func(ctx context.Context, e *testEnv) error { return runQuery(ctx, e, id, edit) }
	}
	into := func(table string) queryEdit {
		return func(e *testEnv, q *bigquery.Query) { q.Dst = e.w.dataset.Table(table) }
	}
	load := func(id, uri string, edit func(e *testEnv, s bigquery.Schema, l *bigquery.Loader)) func(context.Context, *testEnv) error {
		return func(ctx context.Context, e *testEnv) error { return runLoad(ctx, e, id, uri, lineasTable, edit) }
	}
	label := func(v string) queryEdit {
		return func(_ *testEnv, q *bigquery.Query) { q.Labels = map[string]string{"alpipe-aggregate": v} }
	}
	put := func(table string, s rowSaver) func(context.Context, *testEnv) error {
		return func(ctx context.Context, e *testEnv) error { return e.w.dataset.Table(table).Inserter().Put(ctx, s) }
	}
	saver := func(table string, row warehouse.Row, edit func(s *rowSaver)) rowSaver {
		s, err := newRowSaver(mustTable(t, table), row)
		if err != nil {
			t.Fatal(err)
		}
		edit(&s)
		return s
	}
	tests := []struct {
		name           string
		run            func(ctx context.Context, e *testEnv) error
		wantErr        string
		wantViolations []string // rules of this codebase the request breaks
	}{
		{name: "job ID with a dot", run: query("alpipe-pedidos.csv-a1", nil), wantErr: "Invalid job ID"},
		{name: "job ID of 1,025 characters", run: query(strings.Repeat("a", 1025), nil),
			wantErr: "at most 1024 characters"},
		{name: "job ID used twice", run: func(ctx context.Context, e *testEnv) error {
			if err := runQuery(ctx, e, "alpipe-x", nil); err != nil {
				return err
			}
			return runQuery(ctx, e, "alpipe-x", nil)
		}, wantErr: "Error 409: Already Exists: Job alpipe-test:EU.alpipe-x, duplicate"},
		{name: "partition decorator that is not a date", wantErr: "invalid partition decorator",
			run: query("alpipe-r1", into("ventas_diarias_sku$20260230"))},
		{name: "partition decorator of a month", wantErr: "invalid partition decorator",
			run: query("alpipe-r2", into("ventas_diarias_sku$202603"))},
		{name: "load of a file that is not staged", run: load("alpipe-l1", "gs://"+testBucket+"/nope.ndjson", nil),
			wantErr: "notFound: Not found: URI gs://alpipe-staging/nope.ndjson"},
		{name: "load with a schema that differs from the table", wantErr: "Provided Schema does not match Table",
			run: load("alpipe-l2", "gs://"+testBucket+"/x.ndjson", func(_ *testEnv, s bigquery.Schema, _ *bigquery.Loader) {
				s[5] = &bigquery.FieldSchema{Name: "precio_unitario", Type: bigquery.FloatFieldType, Required: true}
			})},
		{name: "insertAll row without insertId and with a missing field",
			run:            put(warehouse.LineasPedido, rowSaver{id: bigquery.NoDedupeID, cells: map[string]bigquery.Value{"pedido_id": "x"}}),
			wantErr:        "Error 400: bqfake: insertAll row 0 of lineas_pedido has no insertId: a retry could duplicate it, invalid",
			wantViolations: []string{"insertAll row 0 of lineas_pedido has no insertId: a retry could duplicate it"}},
		{name: "insertAll row with a missing field", wantErr: `Message: "Missing required field: linea."; Reason: "invalid"`,
			run: put(warehouse.LineasPedido, rowSaver{id: "r1", cells: map[string]bigquery.Value{"pedido_id": "x"}})},
		{name: "insertId of 129 characters", wantErr: "insertId of 129 characters, more than 128",
			run: put(warehouse.LineasPedido, saver(warehouse.LineasPedido, warehouse.Row{ID: "x", Values: lineas(t, 1)[0]},
				func(s *rowSaver) { s.id = strings.Repeat("x", 129) }))},
		{name: "insertAll with a NUMERIC of ten decimals", wantErr: "Invalid NUMERIC value: 0.0000000001",
			run: put(warehouse.VentasHoraPaisPaneles, saver(warehouse.VentasHoraPaisPaneles, pane(t, "ES", 0, "1"),
				func(s *rowSaver) { s.cells["importe"] = json.RawMessage(`"0.0000000001"`) }))},
		{name: "load without CREATE_NEVER into a missing table",
			run: load("alpipe-l3", "gs://"+testBucket+"/x.ndjson", func(e *testEnv, _ bigquery.Schema, l *bigquery.Loader) {
				l.Dst, l.CreateDisposition = e.w.dataset.Table("lineas_pedido_v2"), ""
			}),
			wantErr:        "Error 400: bqfake: load into alpinashop_analitica.lineas_pedido_v2 may create the table",
			wantViolations: []string{`load into alpinashop_analitica.lineas_pedido_v2 may create the table (create disposition ""): tables are Terraform's, loads must say CREATE_NEVER`}},
		{name: "job without a location",
			run:            query("alpipe-q1", func(_ *testEnv, q *bigquery.Query) { q.Location = "" }),
			wantErr:        "Error 400: bqfake: job alpipe-q1 without a location",
			wantViolations: []string{"job alpipe-q1 without a location: jobs.get could not find it outside the US and EU multi-regions"}},
		{name: "label value with an upper-case letter", run: query("alpipe-q2", label("Ventas")),
			wantErr: `Invalid label key "alpipe-aggregate" or label value "Ventas"`},
		{name: "label value of 64 characters", run: query("alpipe-q3", label(strings.Repeat("v", 64))),
			wantErr: "at most 63 characters"},
		{name: "refresh of a partition outside the DAY range", wantErr: "outside the DAY partition range 1960-01-01..2159-12-31",
			run: query("alpipe-r3", into("ventas_diarias_sku$21600101"))},
		// The client sends media outside the endpoint's path: the adapter
		// stages in Cloud Storage instead, and the fake says if that changes.
		{name: "load job with a media upload", run: func(ctx context.Context, e *testEnv) error {
			src := bigquery.NewReaderSource(strings.NewReader("{}\n"))
			src.SourceFormat = bigquery.JSON
			l := e.w.dataset.Table(warehouse.LineasPedido).LoaderFrom(src)
			l.JobID, l.Location, l.CreateDisposition = "alpipe-l4", fakeLocation, bigquery.CreateNever
			_, err := l.Run(ctx)
			return err
		},
			wantErr:        "Error 400: bqfake: unexpected request POST /upload/bigquery/v2/projects/alpipe-test/jobs",
			wantViolations: []string{"unexpected request POST /upload/bigquery/v2/projects/alpipe-test/jobs: the adapter uses jobs.insert/get/query/getQueryResults and tabledata.insertAll only"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newLaxTestEnv(t)
			checkErr(t, tc.run(context.Background(), e), tc.wantErr)
			if diff := cmp.Diff(tc.wantViolations, e.fake.Violations()); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

type queryEdit = func(e *testEnv, q *bigquery.Query)

// runQuery runs the query job "SELECT 1" (CREATE_NEVER) as id in
// fakeLocation, as edit (when set) leaves it, and waits.
func runQuery(ctx context.Context, e *testEnv, id string, edit queryEdit) error {
	q := e.w.client.Query("SELECT 1")
	q.JobID, q.Location, q.CreateDisposition = id, fakeLocation, bigquery.CreateNever
	if edit != nil {
		edit(e, q)
	}
	j, err := q.Run(ctx)
	if err != nil {
		return err
	}
	return e.w.await(ctx, j)
}

// runLoad loads uri into lineas_pedido (CREATE_NEVER) as job id in
// fakeLocation, with tb's schema, as edit (when set) leaves both, and waits.
func runLoad(ctx context.Context, e *testEnv, id, uri string, tb warehouse.Table,
	edit func(e *testEnv, s bigquery.Schema, l *bigquery.Loader)) error {
	src := bigquery.NewGCSReference(uri)
	src.SourceFormat, src.Schema = bigquery.JSON, bigquerySchema(tb)
	l := e.w.dataset.Table(warehouse.LineasPedido).LoaderFrom(src)
	l.JobID, l.Location, l.CreateDisposition = id, fakeLocation, bigquery.CreateNever
	if edit != nil {
		edit(e, src.Schema, l)
	}
	j, err := l.Run(ctx)
	if err != nil {
		return err
	}
	return e.w.await(ctx, j)
}

func mustTable(t testing.TB, name string) warehouse.Table {
	t.Helper()
	tb, err := warehouse.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
