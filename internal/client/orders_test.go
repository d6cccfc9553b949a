package client

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadStepsInput: a byte order mark (Windows editors write one) is not
// part of the first order, and a line that is not JSON is named by its
// number and its start. Before, a BOM gave "invalid character 'ï' looking
// for beginning of value".
func TestReadStepsInput(t *testing.T) {
	tests := []struct {
		name, in  string
		wantOrder string
		wantErr   string
	}{
		{name: "BOM", in: "\ufeff" + `{"momento_evento":"2026-03-14T17:00:00Z","pedido_id":"P-1"}` + "\n", wantOrder: `{"pedido_id":"P-1"}`},
		{name: "CSV", in: "\ufeffpedido_id,linea,fecha,sku,cantidad,precio_unitario,importe,cliente_id,pais\n",
			wantErr: `line 1 "pedido_id,linea,fecha,sku,cantidad,preci…" is not a JSON object: invalid character 'p' looking for beginning of value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := ReadSteps(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ReadSteps error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != 1 {
				t.Fatalf("%d steps, want 1", len(steps))
			}
			if diff := cmp.Diff(tt.wantOrder, string(steps[0].Order)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}
