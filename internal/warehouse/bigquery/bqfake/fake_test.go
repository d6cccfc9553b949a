package bqfake_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/civil"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

const (
	project = "alpipe-demo"
	dataset = "alpinashop_analitica"
)

// start serves a fake and connects the real client to it as the
// production binary does under BIGQUERY_EMULATOR_HOST.
func start(t *testing.T, opt bqfake.Options) (*bqfake.Fake, *bigquery.Client) {
	t.Helper()
	f, err := bqfake.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	f.FailOnViolations(t)
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	c, err := bigquery.NewClient(context.Background(), project, option.WithEndpoint(srv.URL+"/bigquery/v2/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	c.Location = "EU"
	return f, c
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		opt     bqfake.Options
		wantErr string
	}{
		{"valid", bqfake.Options{Project: project, Dataset: dataset}, ""},
		{"missing names", bqfake.Options{}, `bqfake: project "", dataset "": want both, and ViewSQL with SQL`},
		{"SQL without ViewSQL", bqfake.Options{Project: project, Dataset: dataset, SQL: "http://127.0.0.1:1"},
			`bqfake: project "` + project + `", dataset "` + dataset + `": want both, and ViewSQL with SQL`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := bqfake.New(tc.opt)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// Every table of the schema exists, empty, as Terraform creates it.
			for _, tb := range warehouse.Tables() {
				if rows := f.Rows(tb.Name); rows != nil {
					t.Errorf("table %s has rows %v", tb.Name, rows)
				}
			}
		})
	}
}

// TestClientPaths drives every request kind the adapter makes through the
// real client at the emulator endpoint: they all arrive under /bigquery/v2/
// (an unknown path would be a violation, failing the test at cleanup).
func TestClientPaths(t *testing.T) {
	ctx := context.Background()
	staged := `{"opinion_id":"O-1","sku":"SKU-1","fecha":"2026-03-14","puntuacion":"5","texto":null,"pais":"ES","source_object":"gs://b/o.csv","source_generation":"1","source_line":"2","ingested_at":"2026-03-14T10:00:00Z"}` + "\n"
	f, c := start(t, bqfake.Options{Project: project, Dataset: dataset, Staged: func(ctx context.Context, bucket, name string) (io.ReadCloser, error) {
		if bucket != "staging" || name != "o.ndjson" {
			return nil, errors.New("no such object")
		}
		return io.NopCloser(strings.NewReader(staged)), nil
	}})
	f.SetRunningPolls(1)
	ds := c.Dataset(dataset)
	opiniones, err := warehouse.Lookup(warehouse.Opiniones)
	if err != nil {
		t.Fatal(err)
	}
	// The test's line must fit the schema, or the load would fail less clearly.
	if _, err := bqfake.CheckRow(opiniones.Schema, []byte(strings.TrimSpace(staged))); err != nil {
		t.Fatal(err)
	}

	// jobs.insert (load) + jobs.get until DONE.
	src := bigquery.NewGCSReference("gs://staging/o.ndjson")
	src.SourceFormat = bigquery.JSON
	src.Schema = schemaOf(opiniones)
	l := ds.Table(warehouse.Opiniones).LoaderFrom(src)
	l.JobID = "alpipe-load-a1"
	l.CreateDisposition = bigquery.CreateNever
	wait(t, ctx, l.Run)
	if n := len(f.Rows(warehouse.Opiniones)); n != 1 {
		t.Errorf("opiniones has %d rows after the load, want 1", n)
	}

	// A refresh: WRITE_TRUNCATE of one partition, checked, then DONE.
	q := c.Query("SELECT fecha FROM `" + project + "." + dataset + ".lineas_pedido` WHERE fecha = @fecha")
	q.JobID = "alpipe-refresh-ventas_diarias_sku-20260314-0123456789abcdef"
	q.Parameters = []bigquery.QueryParameter{{Name: "fecha", Value: civil.Date{Year: 2026, Month: 3, Day: 14}}}
	q.Dst = ds.Table(warehouse.VentasDiariasSKU + "$20260314")
	q.WriteDisposition, q.CreateDisposition = bigquery.WriteTruncate, bigquery.CreateNever
	wait(t, ctx, q.Run)

	// tabledata.insertAll.
	err = ds.Table(warehouse.PedidosDescartados).Inserter().Put(ctx, &bigquery.ValuesSaver{
		Schema: schemaOf(mustLookup(t, warehouse.PedidosDescartados)), InsertID: "dl-1", Row: deadLetterRow(t)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.Rows(warehouse.PedidosDescartados)); n != 1 {
		t.Errorf("pedidos_descartados has %d rows, want 1", n)
	}

	// jobs.query of SQL without a recorded answer: an empty result.
	rq := c.Query("SELECT sku FROM opiniones")
	rq.DefaultDatasetID = dataset
	it, err := rq.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var row []bigquery.Value
	if err := it.Next(&row); !errors.Is(err, iterator.Done) {
		t.Errorf("unrecorded query: Next = %v, %v; want iterator.Done", row, err)
	}

	var states []string
	for _, j := range f.Jobs() {
		states = append(states, j.ID+" "+j.State)
	}
	want := []string{"alpipe-load-a1 DONE", "alpipe-refresh-ventas_diarias_sku-20260314-0123456789abcdef DONE", "job_fake1 DONE"}
	if diff := cmp.Diff(want, states); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	var kinds []string
	for _, call := range f.Calls() {
		kinds = append(kinds, strings.Fields(call)[0])
	}
	wantKinds := []string{"jobs.insert", "jobs.get", "jobs.insert", "jobs.get", "tabledata.insertAll", "jobs.query", "jobs.getQueryResults"}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func wait(t *testing.T, ctx context.Context, run func(context.Context) (*bigquery.Job, error)) {
	t.Helper()
	j, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, err := j.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Done() {
			if st.Err() != nil {
				t.Fatal(st.Err())
			}
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func mustLookup(t *testing.T, name string) warehouse.Table {
	t.Helper()
	tb, err := warehouse.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func schemaOf(tb warehouse.Table) bigquery.Schema {
	s := make(bigquery.Schema, len(tb.Schema))
	for i, f := range tb.Schema {
		typ := bigquery.FieldType(f.Type)
		if f.Type == warehouse.Int64 {
			typ = bigquery.IntegerFieldType
		}
		s[i] = &bigquery.FieldSchema{Name: f.Name, Type: typ, Required: f.Required()}
	}
	return s
}

// deadLetterRow is one valid row of pedidos_descartados, built from its
// schema: text for STRING, 1 for INT64, and so on.
func deadLetterRow(t *testing.T) []bigquery.Value {
	t.Helper()
	tb := mustLookup(t, warehouse.PedidosDescartados)
	row := make([]bigquery.Value, len(tb.Schema))
	for i, f := range tb.Schema {
		switch f.Type {
		case warehouse.String:
			row[i] = "x"
		case warehouse.Int64:
			row[i] = int64(1)
		case warehouse.Timestamp:
			row[i] = time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
		case warehouse.Date:
			row[i] = civil.Date{Year: 2026, Month: 3, Day: 14}
		default:
			t.Fatalf("pedidos_descartados column %s of type %s: extend deadLetterRow", f.Name, f.Type)
		}
	}
	return row
}
