package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

func TestTablesListsEveryTableAndTheView(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(context.Background(), []string{"tables", "--format", "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var docs []tableDoc
	if err := json.Unmarshal(out.Bytes(), &docs); err != nil {
		t.Fatalf("tables --format json: %v\n%s", err, out.String())
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Table+" "+d.Kind)
	}
	var want []string
	for _, tb := range warehouse.Tables() {
		want = append(want, tb.Name+" table")
	}
	for _, v := range warehouse.Views() {
		want = append(want, v.Name+" view")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

func TestSchema(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string // lines that must appear
		wantErr string
	}{
		{name: "a table", args: []string{"schema", "lineas_pedido"}, want: []string{"column", "importe", "NUMERIC"}},
		{name: "the view names what it reads", args: []string{"schema", "ventas_hora_pais"}, want: []string{"a view over ventas_hora_pais_paneles", "window_start"}},
		{name: "a typo gets a suggestion", args: []string{"schema", "lineas_pedid"}, wantErr: `did you mean "lineas_pedido"`},
		{name: "no table", args: []string{"schema"}, wantErr: "want exactly one TABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := dispatch(context.Background(), tt.args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
