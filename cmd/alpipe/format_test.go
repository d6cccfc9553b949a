package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestContractsAndValidate(t *testing.T) {
	var out bytes.Buffer
	if err := dispatch(t.Context(), []string{"contracts"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lineas_pedido:", "opiniones:", "precio_unitario", "NUMERIC", "table:   lineas_pedido"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("contracts lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	err := dispatch(t.Context(), []string{"validate", erpFile, "--object", "exportaciones/2026/03/14/pedidos-erp.csv", "--format", "json"}, &out)
	if err == nil || !strings.Contains(err.Error(), "rows would be quarantined") {
		t.Errorf("validate of the dirty ERP file: error %v, want the rows it would quarantine", err)
	}
	for _, want := range []string{`"feed": "lineas_pedido"`, `"rows_read": `, `"rows_rejected": `, `"examples": [`, `"line": `} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("validate JSON lacks %q:\n%s", want, out.String())
		}
	}
}
