package bigquery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/googleapi"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

var _ warehousetest.Warehouse = (*Warehouse)(nil)

// TestLiveConformance runs the warehouse conformance suite against real
// BigQuery, in a scratch dataset, with load files staged in a real bucket.
// It needs Application Default Credentials allowed to run jobs in
// GOOGLE_CLOUD_PROJECT, to create tables in BIGQUERY_TEST_DATASET (which
// must exist; its location is read from it) and to write and delete objects
// in STAGING_BUCKET (in the dataset's location). Missing tables and the
// dashboard view are created from warehouse.Tables() and warehouse.ViewSQL;
// the suite tags its rows, so reruns in the same dataset do not collide.
// The suite's rows are dated March 2026: a dataset default partition
// expiration shorter than their age would drop them on arrival.
func TestLiveConformance(t *testing.T) {
	project := os.Getenv("GOOGLE_CLOUD_PROJECT")
	dataset := os.Getenv("BIGQUERY_TEST_DATASET")
	bucket := os.Getenv("STAGING_BUCKET")
	if project == "" || dataset == "" || bucket == "" {
		t.Skip("live BigQuery test: set GOOGLE_CLOUD_PROJECT, BIGQUERY_TEST_DATASET and STAGING_BUCKET (and credentials) to run it")
	}
	if testing.Short() {
		t.Skip("live BigQuery test: skipped under -short")
	}
	ctx := context.Background()
	client, err := bigquery.NewClient(ctx, project)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	md, err := client.Dataset(dataset).Metadata(ctx)
	if err != nil {
		t.Fatalf("scratch dataset %s.%s: %v", project, dataset, err)
	}
	sc, err := objects.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	gcs, err := objects.NewGCS(sc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(client, gcs, Options{
		Project:       project,
		Dataset:       dataset,
		Location:      md.Location,
		StagingBucket: bucket,
		StagingPrefix: "alpipe-conformance/",
		JobPrefix:     "alpipe_conformance",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := createScratchTables(ctx, client.Dataset(dataset), w.qualify); err != nil {
		t.Fatal(err)
	}
	warehousetest.Run(t, func(t *testing.T) warehousetest.Warehouse { return w })
}

// createScratchTables creates every table of warehouse.Tables() (with its
// partitioning and clustering, as Terraform does) and the dashboard view in
// ACCUMULATING mode, leaving existing ones alone.
func createScratchTables(ctx context.Context, ds *bigquery.Dataset, qualify func(string) string) error {
	for _, tb := range warehouse.Tables() {
		md := &bigquery.TableMetadata{
			Schema:      bigquerySchema(tb),
			Description: "alpipe conformance test table",
		}
		if tb.PartitionField != "" {
			md.TimePartitioning = &bigquery.TimePartitioning{Type: bigquery.DayPartitioningType, Field: tb.PartitionField}
		}
		if len(tb.Clustering) > 0 {
			md.Clustering = &bigquery.Clustering{Fields: tb.Clustering}
		}
		if err := createIfMissing(ctx, ds.Table(tb.Name), md); err != nil {
			return err
		}
	}
	view, err := warehouse.ViewSQL(warehouse.Accumulating, warehouse.BigQuery, qualify)
	if err != nil {
		return err
	}
	return createIfMissing(ctx, ds.Table(warehouse.VentasHoraPais), &bigquery.TableMetadata{ViewQuery: view})
}

func createIfMissing(ctx context.Context, t *bigquery.Table, md *bigquery.TableMetadata) error {
	err := t.Create(ctx, md)
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusConflict {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", t.FullyQualifiedName(), err)
	}
	return nil
}
