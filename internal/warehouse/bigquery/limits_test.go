package bigquery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

func TestInsertID(t *testing.T) {
	long := strings.Repeat("p", 129)
	sum := sha256.Sum256([]byte(long))
	tests := []struct {
		name string
		id   string
		want string
	}{
		{name: "short ID sent as it is", id: "ventas_hora_pais-1773482400-ES-0", want: "ventas_hora_pais-1773482400-ES-0"},
		{name: "128 characters sent as they are", id: strings.Repeat("p", 128), want: strings.Repeat("p", 128)},
		{name: "129 characters hashed", id: long, want: "sha256-" + hex.EncodeToString(sum[:])},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := insertID(tc.id)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("insertID (-want +got):\n%s", diff)
			}
			if len(got) > bqfake.MaxInsertIDLen {
				t.Errorf("insertID of %d characters, BigQuery takes %d", len(got), bqfake.MaxInsertIDLen)
			}
		})
	}
	if insertID(long) == insertID(long+"x") {
		t.Error("two long IDs hash to the same insertId")
	}
}

// longPane is a pane whose identity is longer than an insertId may be, as
// a long aggregation name or key would make it.
func longPane(t *testing.T, pais string) warehouse.Row {
	r := pane(t, pais, 0, "1")
	r.ID = strings.Repeat("ventas_hora_pais_por_canal_y_region-", 4) + r.ID
	return r
}

// TestAppendLongIdentity: a row ID over 128 characters is sent hashed and
// stays deduplicated on retry (TestAppendRejectedRow: errors name the ID).
func TestAppendLongIdentity(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	es := longPane(t, "ES")
	if len(es.ID) <= maxInsertIDLen {
		t.Fatalf("test row ID of %d characters is not long", len(es.ID))
	}
	for range 2 {
		if err := e.w.Append(ctx, warehouse.VentasHoraPaisPaneles, []warehouse.Row{es}); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{insertID(es.ID)}, e.fake.InsertIDs(warehouse.VentasHoraPaisPaneles)); diff != "" {
		t.Errorf("stored insertIds (-want +got):\n%s", diff)
	}
	if n := len(e.fake.Rows(warehouse.VentasHoraPaisPaneles)); n != 1 {
		t.Errorf("%d rows, want 1", n)
	}
}

func TestCheckLabels(t *testing.T) {
	tests := []struct {
		name    string
		labels  map[string]string
		wantErr string
	}{
		{name: "aggregate table name", labels: map[string]string{"alpipe-aggregate": "ventas_diarias_sku"}},
		{name: "empty value", labels: map[string]string{"alpipe-writer": ""}},
		{name: "upper-case value", labels: map[string]string{"alpipe-aggregate": "Ventas"}, wantErr: `label alpipe-aggregate value "Ventas"`},
		{name: "value of 64 characters", labels: map[string]string{"k": strings.Repeat("v", 64)}, wantErr: "at most 63"},
		{name: "key starting with a digit", labels: map[string]string{"1k": "v"}, wantErr: `label key "1k"`},
		{name: "empty key", labels: map[string]string{"": "v"}, wantErr: `label key ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, checkLabels(tc.labels), tc.wantErr)
		})
	}
}
