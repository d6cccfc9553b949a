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

// TestFakeChecksRequests shows that fakeBigQuery refuses what BigQuery
// refuses, so the adapter's passing tests mean something. Each case sends
// a request through the real client, bypassing the adapter's own checks.
func TestFakeChecksRequests(t *testing.T) {
	lineasTable, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		t.Fatal(err)
	}
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
				return runLoad(ctx, e, "alpipe-l1", "gs://"+testBucket+"/nope.ndjson", bigquerySchema(lineasTable))
			},
			wantErr: "notFound: Not found: URI gs://alpipe-staging/nope.ndjson",
		},
		{
			name: "load with a schema that differs from the table",
			run: func(ctx context.Context, e *testEnv) error {
				s := bigquerySchema(lineasTable)
				s[5] = &bigquery.FieldSchema{Name: "precio_unitario", Type: bigquery.FloatFieldType, Required: true}
				return runLoad(ctx, e, "alpipe-l2", "gs://"+testBucket+"/x.ndjson", s)
			},
			wantErr: "Provided Schema does not match Table",
		},
		{
			name: "insertAll row without insertId and with a missing field",
			run: func(ctx context.Context, e *testEnv) error {
				row := rowSaver{id: bigquery.NoDedupeID, cells: map[string]bigquery.Value{"pedido_id": "x"}}
				return e.w.dataset.Table(warehouse.LineasPedido).Inserter().Put(ctx, row)
			},
			wantErr:        `Message: "Missing required field: linea."; Reason: "invalid"`,
			wantViolations: []string{"insertAll row 0 of lineas_pedido has no insertId: a retry could duplicate it"},
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
				src := bigquery.NewGCSReference("gs://" + testBucket + "/x.ndjson")
				src.SourceFormat = bigquery.JSON
				src.Schema = bigquerySchema(lineasTable)
				l := e.w.dataset.Table("lineas_pedido_v2").LoaderFrom(src)
				l.JobID = "alpipe-l3"
				l.Location = fakeLocation
				j, err := l.Run(ctx)
				if err != nil {
					return err
				}
				return waitErr(ctx, e, j)
			},
			wantErr:        "notFound: Not found: Table alpipe-test:alpinashop_analitica.lineas_pedido_v2",
			wantViolations: []string{"load would create table alpinashop_analitica.lineas_pedido_v2: tables are Terraform's, loads must say CREATE_NEVER"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.fake.recordOnly = true
			err := tc.run(context.Background(), e)
			checkErr(t, err, tc.wantErr)
			e.fake.mu.Lock()
			violations := e.fake.violations
			e.fake.mu.Unlock()
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
	j, err := q.Run(ctx)
	if err != nil {
		return err
	}
	return waitErr(ctx, e, j)
}

func runLoad(ctx context.Context, e *testEnv, id, uri string, schema bigquery.Schema) error {
	src := bigquery.NewGCSReference(uri)
	src.SourceFormat = bigquery.JSON
	src.Schema = schema
	l := e.w.dataset.Table(warehouse.LineasPedido).LoaderFrom(src)
	l.JobID = id
	l.Location = fakeLocation
	l.CreateDisposition = bigquery.CreateNever
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
