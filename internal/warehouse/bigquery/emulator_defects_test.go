package bigquery

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/bqemulator"
)

// TestGoogleSQLDefectsStillThere: the live run's setup on a dataset
// reporting no location asks for BIGQUERY_LOCATION; given it, it creates
// every table and view. On that dataset, with no bqfake between, each
// emulator defect bqfake stands in for is still there, so that a newer
// emulator without it fails here and the workaround goes.
func TestGoogleSQLDefectsStillThere(t *testing.T) {
	e := emulator(t)
	ctx := context.Background()
	client := e.fresh(t)
	if err := client.Dataset(testDataset).Create(ctx, &bigquery.DatasetMetadata{}); err != nil {
		t.Fatal(err)
	}
	if _, err := openScratch(ctx, client, testDataset, warehouse.Accumulating, nil, Options{}); err == nil || !strings.Contains(err.Error(), "BIGQUERY_LOCATION") {
		t.Errorf("openScratch without a location: %v, want an error naming BIGQUERY_LOCATION", err)
	}
	w, err := openScratch(ctx, client, testDataset, warehouse.Accumulating, nil, Options{Location: emuLocation, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("openScratch with BIGQUERY_LOCATION: %v", err)
	}
	var want, got []string
	for _, tb := range warehouse.Tables() {
		want = append(want, tb.Name)
	}
	for _, v := range warehouse.Views() {
		want = append(want, v.Name)
	}
	it := client.Dataset(testDataset).Tables(ctx)
	for {
		tb, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tb.TableID)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("scratch dataset holds %v, want %v", got, want)
	}
	gone := func(t *testing.T, defect string) {
		t.Helper()
		t.Errorf("the emulator no longer has this defect; drop its workaround in bqfake: %s", defect)
	}
	t.Run("window SUM of NUMERIC", func(t *testing.T) {
		res, err := w.Query(ctx, "SELECT SUM(x) OVER (PARTITION BY k) AS s, SUM(CAST(x * 4 AS INT64)) OVER (PARTITION BY k) AS n\n"+
			"FROM UNNEST([STRUCT(1 AS k, NUMERIC '1.5' AS x), (1, NUMERIC '2.25')])")
		if err != nil {
			t.Fatal(err)
		}
		if want := [][]string{{"3.75", "15"}, {"3.75", "15"}}; slices.EqualFunc(res.Rows, want, slices.Equal) {
			gone(t, defectWindowSum)
		}
		t.Logf("SUM OVER: %v (want 3.75; INT64 15)", res.Rows)
	})
	t.Run("ARRAY<TIMESTAMP> parameter", func(t *testing.T) {
		at := warehouse.TimeValue(time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC))
		_, err := w.readSQL(ctx, "probe", "SELECT t FROM UNNEST([TIMESTAMP '2026-03-14 12:00:00+00']) AS t WHERE t IN UNNEST(@ts)",
			[]warehouse.Param{{ParamSpec: warehouse.ParamSpec{Name: "ts", Type: warehouse.Timestamp, Array: true}, Values: []warehouse.Value{at}}})
		if err == nil {
			gone(t, defectArrayTimestamp)
		}
		t.Logf("IN UNNEST(@ts): %v", err)
	})
	t.Run("insertId", func(t *testing.T) {
		key := "probe-" + strings.ToLower(rand.Text())
		for range 2 {
			if err := w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{pane(t, key, 0, "1")}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := w.Query(ctx, "SELECT COUNT(*) FROM ventas_hora_pais_paneles WHERE pais = '"+key+"'")
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(res.Rows[0], []string{"1"}) {
			gone(t, defectInsertID)
		}
		t.Logf("one row ID appended twice: %v rows", res.Rows[0])
	})
	t.Run("duplicate job ID", func(t *testing.T) {
		id := "probe-" + strings.ToLower(rand.Text())
		var codes []int
		for range 2 {
			q := client.Query("SELECT 1")
			q.JobID, q.Location = id, emuLocation
			_, err := q.Run(ctx)
			codes = append(codes, httpCode(err))
		}
		if codes[1] == http.StatusConflict {
			gone(t, defectDuplicateJob)
		}
		t.Logf("jobs.insert of one ID twice: %v", codes)
	})
	t.Run("dry run statement type", func(t *testing.T) {
		err := w.checkSelect(ctx, "DELETE FROM pedidos_descartados WHERE FALSE")
		if err != nil {
			gone(t, defectDryRun)
		}
		t.Logf("dry run of a DELETE through the adapter's check: %v", err)
	})
	t.Run("partition decorator and default dataset", func(t *testing.T) {
		client := e.fresh(t)
		for _, ds := range []string{"first", "second"} {
			if err := client.Dataset(ds).Create(ctx, &bigquery.DatasetMetadata{}); err != nil {
				t.Fatal(err)
			}
			if err := client.Dataset(ds).Table("t").Create(ctx, &bigquery.TableMetadata{
				Schema:           bigquery.Schema{{Name: "fecha", Type: bigquery.DateFieldType}, {Name: "ds", Type: bigquery.StringFieldType}},
				TimePartitioning: &bigquery.TimePartitioning{Type: bigquery.DayPartitioningType, Field: "fecha"}}); err != nil {
				t.Fatal(err)
			}
			q := client.Query("INSERT INTO `" + testProject + "." + ds + ".t` (fecha, ds) VALUES (DATE '2026-03-14', '" + ds + "')")
			if err := runJob(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		q := client.Query("SELECT ds FROM t")
		q.DefaultProjectID, q.DefaultDatasetID = testProject, "second"
		it, err := q.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var row []bigquery.Value
		if err := it.Next(&row); err != nil {
			t.Fatal(err)
		}
		got, _ := row[0].(string)
		if got == "second" {
			gone(t, defectDefaultDataset)
		}
		t.Logf("SELECT ds FROM t, default dataset second: %q", got)

		q = client.Query("SELECT DATE '2026-03-14' AS fecha, 'new' AS ds")
		q.Dst = client.Dataset("first").Table("t$20260314")
		q.WriteDisposition, q.CreateDisposition = bigquery.WriteTruncate, bigquery.CreateNever
		err = runJob(ctx, q)
		if err == nil {
			gone(t, defectDecorator)
		}
		t.Logf("query job into t$20260314: %v", err)
	})
}

// fresh starts an emulator of t's own, with a plain client.
func (e *engine) fresh(t *testing.T) *bigquery.Client {
	t.Helper()
	em, err := bqemulator.Start(context.Background(), e.bin, bqemulator.Options{Project: testProject})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(em.Stop)
	client, err := bigquery.NewClient(context.Background(), testProject,
		option.WithEndpoint(em.URL+"/bigquery/v2/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func runJob(ctx context.Context, q *bigquery.Query) error {
	j, err := q.Run(ctx)
	if err != nil {
		return err
	}
	st, err := j.Wait(ctx)
	if err != nil {
		return err
	}
	return st.Err()
}

// httpCode is the HTTP status of an API error, 0 for none.
func httpCode(err error) int {
	ge := &googleapi.Error{}
	errors.As(err, &ge)
	return ge.Code
}
