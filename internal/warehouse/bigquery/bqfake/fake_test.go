package bqfake_test

import (
	"testing"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

const (
	project = "alpipe-demo"
	dataset = "alpinashop_analitica"
)

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
			if err != nil || tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
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
