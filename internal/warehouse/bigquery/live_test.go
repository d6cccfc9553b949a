package bigquery

import (
	"context"
	"fmt"
	"os"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

var _ warehousetest.Warehouse = (*Warehouse)(nil)

// TestLiveConformance runs the warehouse conformance suite against real
// BigQuery, in a scratch dataset, with load files staged in a real bucket.
// It needs Application Default Credentials allowed to run jobs in
// GOOGLE_CLOUD_PROJECT, to create tables in BIGQUERY_TEST_DATASET (which
// must exist; its location is read from it unless BIGQUERY_LOCATION says
// it) and to write and delete objects in STAGING_BUCKET (in the dataset's
// location). Missing tables and views are created as Terraform creates
// them (createScratchTables); the suite tags its rows, so reruns in the
// same dataset do not collide. The suite's rows are dated March 2026: a
// dataset default partition expiration shorter than their age would drop
// them on arrival.
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
	sc, err := objects.NewClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	gcs, err := objects.NewGCS(sc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := openScratch(ctx, client, dataset, warehouse.Accumulating, gcs, Options{
		Location:      os.Getenv("BIGQUERY_LOCATION"),
		StagingBucket: bucket,
		StagingPrefix: "alpipe-conformance/",
		JobPrefix:     "alpipe_conformance",
	})
	if err != nil {
		t.Fatal(err)
	}
	warehousetest.Run(t, func(t *testing.T) warehousetest.Warehouse { return w })
}

// openScratch builds the adapter on an existing scratch dataset and
// creates its missing tables and views (views in mode). opt.Location, when
// set, is the location given explicitly (BIGQUERY_LOCATION); else the
// dataset's is used (an emulator's dataset reports none: see
// ResolveLocation).
func openScratch(ctx context.Context, client *bigquery.Client, dataset, mode string, staging Staging, opt Options) (*Warehouse, error) {
	ds := client.Dataset(dataset)
	md, err := ds.Metadata(ctx)
	if err != nil {
		return nil, fmt.Errorf("scratch dataset %s.%s: %w", client.Project(), dataset, err)
	}
	loc, err := ResolveLocation(opt.Location, md.Location)
	if err != nil {
		return nil, fmt.Errorf("scratch dataset %s.%s: %w", client.Project(), dataset, err)
	}
	opt.Project, opt.Dataset, opt.Location = client.Project(), dataset, loc
	w, err := New(client, staging, opt)
	if err != nil {
		return nil, err
	}
	if err := createScratchTables(ctx, ds, mode); err != nil {
		return nil, err
	}
	return w, nil
}
