package contract

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRules(t *testing.T) {
	f := feed(t, "lineas_pedido")
	tests := []struct {
		name, column, want string
	}{
		{name: "bounds and normalisation", column: "cantidad", want: "required; trim; > 0"},
		{name: "allowed set", column: "pais", want: "required; trim; upper; in iso3166-1-alpha2"},
		{name: "derived", column: "importe", want: "derived: cantidad * precio_unitario"},
		{name: "unknown column", column: "canal", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, f.Rules(tt.column)); diff != "" {
				t.Errorf("Rules(%s) (-want +got):\n%s", tt.column, diff)
			}
		})
	}
	if !f.objects.MatchString("exportaciones/2026/03/14/x.csv") || f.ObjectPattern() == "" {
		t.Errorf("ObjectPattern() = %q", f.ObjectPattern())
	}
}
