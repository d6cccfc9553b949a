package bigquery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/bqemulator"
)

// createScratchTables creates in ds what is missing of what Terraform
// creates (terraform/bigquery.tf), the views from its view files in mode.
func createScratchTables(ctx context.Context, ds *bigquery.Dataset, mode string) error {
	for _, tb := range warehouse.Tables() {
		md := &bigquery.TableMetadata{Schema: bigquerySchema(tb), Description: "alpipe conformance test table"}
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
	for _, v := range warehouse.Views() {
		sql, err := terraformView(mode, ds.ProjectID, ds.DatasetID, v)
		if err != nil {
			return err
		}
		if err := createIfMissing(ctx, ds.Table(v.Name), &bigquery.TableMetadata{ViewQuery: sql}); err != nil {
			return err
		}
	}
	return nil
}

// terraformView renders Terraform's view file of mode for v, as templatefile does.
func terraformView(mode, project, dataset string, v warehouse.View) (string, error) {
	root, err := bqemulator.RepoRoot()
	if err != nil {
		return "", err
	}
	file := filepath.Join(root, "terraform", "sql", "view_"+strings.ToLower(mode)+".sql")
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("view of %s: %w", v.Name, err)
	}
	sql := strings.NewReplacer("${project}", project, "${dataset}", dataset, "${panes}", v.Panes, "${key}", v.Key).Replace(string(b))
	keep := "" // %{ if session }
	if v.Session {
		keep = "$1"
	}
	sql = sessionDirective.ReplaceAllString(sql, keep)
	for _, open := range []string{"${", "%{"} {
		if i := strings.Index(sql, open); i >= 0 {
			return "", fmt.Errorf("view of %s: %s leaves a template variable: %.20s", v.Name, file, sql[i:])
		}
	}
	return sql, nil
}

var sessionDirective = regexp.MustCompile(`%\{ if session \}(.*?)%\{ endif \}`)

func createIfMissing(ctx context.Context, t *bigquery.Table, md *bigquery.TableMetadata) error {
	err := t.Create(ctx, md)
	if isDuplicate(err) { // the table exists
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", t.FullyQualifiedName(), err)
	}
	return nil
}
