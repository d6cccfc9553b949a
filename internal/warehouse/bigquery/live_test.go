package bigquery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

var _ warehousetest.Warehouse = (*Warehouse)(nil)

// TestLiveConformance runs the conformance suite against real BigQuery in
// the existing scratch dataset BIGQUERY_TEST_DATASET, staging in
// STAGING_BUCKET, with credentials allowed to run jobs in
// GOOGLE_CLOUD_PROJECT, create tables and write objects. The suite's rows
// are dated March 2026: a default partition expiration shorter than their
// age would drop them on arrival.
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
	w, err := openScratch(ctx, client, dataset, warehouse.Accumulating, gcs, Options{Location: os.Getenv("BIGQUERY_LOCATION"),
		StagingBucket: bucket, StagingPrefix: "alpipe-conformance/", JobPrefix: "alpipe_conformance"})
	if err != nil {
		t.Fatal(err)
	}
	warehousetest.RunWith(t, func(t *testing.T) warehousetest.Warehouse { return w }, warehousetest.Features{})
}

// openScratch builds the adapter on an existing scratch dataset, in its
// location (ResolveLocation), and creates what it misses, views in mode.
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

// ResolveLocation returns the location jobs must name for a dataset that
// reports location dataset ("" from an emulator): the explicit one
// (BIGQUERY_LOCATION) when given, else the dataset's. Both given must
// agree; neither given is an error naming BIGQUERY_LOCATION.
func ResolveLocation(explicit, dataset string) (string, error) {
	switch {
	case explicit == "" && dataset == "":
		return "", errors.New("the dataset reports no location (an emulator's does not): set BIGQUERY_LOCATION")
	case explicit == "":
		return dataset, nil
	case dataset != "" && !strings.EqualFold(explicit, dataset):
		return "", fmt.Errorf("BIGQUERY_LOCATION is %s, but the dataset is in %s", explicit, dataset)
	}
	return explicit, nil
}
