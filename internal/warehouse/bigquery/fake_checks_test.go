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
	tests := []struct {
		name           string
		run            func(ctx context.Context, e *testEnv) error
		wantErr        string
		wantViolations []string // rules of this codebase the request breaks
	}{
		{
			name: "job ID with a dot",
			run: func(ctx context.Context, e *testEnv) error {
				return runQuery(ctx, e, "alpipe-pedidos.csv-a1", "SELECT 1", nil)
			},
			wantErr: "Invalid job ID",
		},
		{
			name: "job ID of 1,025 characters",
			run: func(ctx context.Context, e *testEnv) error {
				return runQuery(ctx, e, strings.Repeat("a", 1025), "SELECT 1", nil)
			},
			wantErr: "at most 1024 characters",
		},
		{
			name: "job ID used twice",
			run: func(ctx context.Context, e *testEnv) error {
				if err := runQuery(ctx, e, "alpipe-x", "SELECT 1", nil); err != nil {
					return err
				}
				return runQuery(ctx, e, "alpipe-x", "SELECT 1", nil)
			},
			wantErr: "Error 409: Already Exists: Job alpipe-test:EU.alpipe-x, duplicate",
		},
		{
			name: "partition decorator that is not a date",
			run: func(ctx context.Context, e *testEnv) error {
				return runQuery(ctx, e, "alpipe-r1", "SELECT 1", e.w.dataset.Table("ventas_diarias_sku$20260230"))
			},
			wantErr: "invalid partition decorator",
		},
		{
			name: "partition decorator of a month",
			run: func(ctx context.Context, e *testEnv) error {
				return runQuery(ctx, e, "alpipe-r2", "SELECT 1", e.w.dataset.Table("ventas_diarias_sku$202603"))
			},
			wantErr: "invalid partition decorator",
		},
		{
			name: "load of a file that is not staged",
			run: func(ctx context.Context, e *testEnv) error {
				return runLoad(ctx, e, "alpipe-l1", "gs://"+testBucket+"/nope.ndjson", bigquerySchema(lineasTable), nil)
			},
			wantErr: "notFound: Not found: URI gs://alpipe-staging/nope.ndjson",
		},
		{
			name: "load with a schema that differs from the table",
			run: func(ctx context.Context, e *testEnv) error {
				s := bigquerySchema(lineasTable)
				s[5] = &bigquery.FieldSchema{Name: "precio_unitario", Type: bigquery.FloatFieldType, Required: true}
				return runLoad(ctx, e, "alpipe-l2", "gs://"+testBucket+"/x.ndjson", s, nil)
			},
			wantErr: "Provided Schema does not match Table",
		},
		{
			name: "insertAll row without insertId and with a missing field",
			run: func(ctx context.Context, e *testEnv) error {
				row := rowSaver{id: bigquery.NoDedupeID, cells: map[string]bigquery.Value{"pedido_id": "x"}}
				return e.w.dataset.Table(warehouse.LineasPedido).Inserter().Put(ctx, row)
			},
			wantErr:        "Error 400: bqfake: insertAll row 0 of lineas_pedido has no insertId: a retry could duplicate it, invalid",
			wantViolations: []string{"insertAll row 0 of lineas_pedido has no insertId: a retry could duplicate it"},
		},
		{
			name: "insertAll row with a missing field",
			run: func(ctx context.Context, e *testEnv) error {
				row := rowSaver{id: "r1", cells: map[string]bigquery.Value{"pedido_id": "x"}}
				return e.w.dataset.Table(warehouse.LineasPedido).Inserter().Put(ctx, row)
			},
			wantErr: `Message: "Missing required field: linea."; Reason: "invalid"`,
		},
		{
			name: "insertId of 129 characters",
			run: func(ctx context.Context, e *testEnv) error {
				s, err := newRowSaver(lineasTable, warehouse.Row{ID: "x", Values: lineas(t, 1)[0]})
				if err != nil {
					return err
				}
				s.id = strings.Repeat("x", 129)
				return e.w.dataset.Table(warehouse.LineasPedido).Inserter().Put(ctx, s)
			},
			wantErr: "insertId of 129 characters, more than 128",
		},
		{
			name: "insertAll with a NUMERIC of ten decimals",
			run: func(ctx context.Context, e *testEnv) error {
				row := pane(t, "ES", 0, "1")
				s, err := newRowSaver(mustTable(t, warehouse.VentasHoraPaisPaneles), row)
				if err != nil {
					return err
				}
				s.cells["importe"] = json.RawMessage(`"0.0000000001"`)
				return e.w.dataset.Table(warehouse.VentasHoraPaisPaneles).Inserter().Put(ctx, s)
			},
			wantErr: "Invalid NUMERIC value: 0.0000000001",
		},
		{
			name: "load without CREATE_NEVER into a missing table",
			run: func(ctx context.Context, e *testEnv) error {
				into := func(l *bigquery.Loader) { l.Dst, l.CreateDisposition = e.w.dataset.Table("lineas_pedido_v2"), "" }
				return runLoad(ctx, e, "alpipe-l3", "gs://"+testBucket+"/x.ndjson", bigquerySchema(lineasTable), into)
			},
			wantErr:        "Error 400: bqfake: load into alpinashop_analitica.lineas_pedido_v2 may create the table",
			wantViolations: []string{`load into alpinashop_analitica.lineas_pedido_v2 may create the table (create disposition ""): tables are Terraform's, loads must say CREATE_NEVER`},
		},
		{
			name: "job without a location",
			run: func(ctx context.Context, e *testEnv) error {
				return insertQuery(ctx, e, "alpipe-q1", func(q *bigquery.Query) { q.Location = "" })
			},
			wantErr:        "Error 400: bqfake: job alpipe-q1 without a location",
			wantViolations: []string{"job alpipe-q1 without a location: jobs.get could not find it outside the US and EU multi-regions"},
		},
		{
			name: "label value with an upper-case letter",
			run: func(ctx context.Context, e *testEnv) error {
				return insertQuery(ctx, e, "alpipe-q2", func(q *bigquery.Query) {
					q.Labels = map[string]string{"alpipe-aggregate": "Ventas"}
				})
			},
			wantErr: `Invalid label key "alpipe-aggregate" or label value "Ventas"`,
		},
		{
			name: "label value of 64 characters",
			run: func(ctx context.Context, e *testEnv) error {
				return insertQuery(ctx, e, "alpipe-q3", func(q *bigquery.Query) {
					q.Labels = map[string]string{"alpipe-aggregate": strings.Repeat("v", 64)}
				})
			},
			wantErr: "at most 63 characters",
		},
		{
			name: "refresh of a partition outside the DAY range",
			run: func(ctx context.Context, e *testEnv) error {
				return insertQuery(ctx, e, "alpipe-r3", func(q *bigquery.Query) {
					q.Dst = e.w.dataset.Table("ventas_diarias_sku$21600101")
					q.CreateDisposition = bigquery.CreateNever
				})
			},
			wantErr: "outside the DAY partition range 1960-01-01..2159-12-31",
		},
		{
			// The client sends media to /upload/bigquery/v2/, outside the
			// endpoint's path: the adapter stages in Cloud Storage instead,
			// and the fake says so if that ever changes.
			name: "load job with a media upload",
			run: func(ctx context.Context, e *testEnv) error {
				src := bigquery.NewReaderSource(strings.NewReader("{}\n"))
				src.SourceFormat = bigquery.JSON
				l := e.w.dataset.Table(warehouse.LineasPedido).LoaderFrom(src)
				l.JobID = "alpipe-l4"
				l.Location = fakeLocation
				l.CreateDisposition = bigquery.CreateNever
				_, err := l.Run(ctx)
				return err
			},
			wantErr:        "Error 400: bqfake: unexpected request POST /upload/bigquery/v2/projects/alpipe-test/jobs",
			wantViolations: []string{"unexpected request POST /upload/bigquery/v2/projects/alpipe-test/jobs: the adapter uses jobs.insert/get/query/getQueryResults and tabledata.insertAll only"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newLaxTestEnv(t)
			err := tc.run(context.Background(), e)
			checkErr(t, err, tc.wantErr)
			violations := e.fake.Violations()
			if diff := cmp.Diff(tc.wantViolations, violations); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func runQuery(ctx context.Context, e *testEnv, id, sql string, dst *bigquery.Table) error {
	q := e.w.client.Query(sql)
	q.JobID = id
	q.Location = fakeLocation
	q.Dst = dst
	q.CreateDisposition = bigquery.CreateNever
	j, err := q.Run(ctx)
	if err != nil {
		return err
	}
	return waitErr(ctx, e, j)
}

// insertQuery inserts the query job "SELECT 1" as id in fakeLocation, as
// edit leaves it, and does not wait for it.
func insertQuery(ctx context.Context, e *testEnv, id string, edit func(q *bigquery.Query)) error {
	q := e.w.client.Query("SELECT 1")
	q.JobID, q.Location = id, fakeLocation
	edit(q)
	_, err := q.Run(ctx)
	return err
}

// runLoad loads uri into lineas_pedido (CREATE_NEVER) as job id in
// fakeLocation, as edit (when set) leaves the loader, and waits for it.
func runLoad(ctx context.Context, e *testEnv, id, uri string, schema bigquery.Schema,
	edit func(l *bigquery.Loader)) error {
	src := bigquery.NewGCSReference(uri)
	src.SourceFormat, src.Schema = bigquery.JSON, schema
	l := e.w.dataset.Table(warehouse.LineasPedido).LoaderFrom(src)
	l.JobID, l.Location, l.CreateDisposition = id, fakeLocation, bigquery.CreateNever
	if edit != nil {
		edit(l)
	}
	j, err := l.Run(ctx)
	if err != nil {
		return err
	}
	return waitErr(ctx, e, j)
}

func waitErr(ctx context.Context, e *testEnv, j *bigquery.Job) error {
	st, err := e.w.wait(ctx, j)
	if err != nil {
		return err
	}
	if st.Err() != nil {
		return jobError(j, st)
	}
	return nil
}

func mustTable(t *testing.T, name string) warehouse.Table {
	t.Helper()
	tb, err := warehouse.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
