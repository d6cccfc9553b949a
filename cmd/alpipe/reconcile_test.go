package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/reconcile"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/window"
)

// TestReconcileThroughTheServer: reconcile reads the warehouse that serve
// holds, and its report is the one reconcile makes reading that warehouse
// in-process. The ERP file's one valid line (ES, 2 units, 179.80) is
// explained by the invalid message of its order; the stream's own ES order
// has no batch line, so ES stays unexplained and the command fails, after
// printing the report. Each of its three reads answers rows.
func TestReconcileThroughTheServer(t *testing.T) {
	dropERP(t)
	history := filepath.Join(t.TempDir(), "pedidos.jsonl")
	lines := []string{
		`{"llegada":"2026-03-14T16:11:00Z","momento_evento":"2026-03-14T16:10:00Z","pedido":{"pedido_id":"P-REC-1","cliente_id":"C-1","pais":"ES","importe_total":"89.90","lineas":[{"sku":"MOCH-40L-AZ","cantidad":1,"precio_unitario":"89.90"}]}}`,
		`{"llegada":"2026-03-14T16:21:00Z","momento_evento":"2026-03-14T16:20:00Z","pedido":{"pedido_id":"PED-2026-0314-0002","cliente_id":"CLI-00958","pais":"ES","importe_total":"1,5e3","lineas":[]}}`,
	}
	if err := os.WriteFile(history, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PUBSUB_EMULATOR_HOST", "")
	if _, err := run(t, "publish", history); err != nil {
		t.Fatalf("publish: %v", err)
	}
	if _, err := run(t, "tick", "--now", "2026-03-14T18:00:00Z"); err != nil {
		t.Fatalf("tick: %v", err)
	}

	var out string // 14 March's report
	for _, date := range []string{"2026-03-14", "2026-03-13"} {
		t.Run(date, func(t *testing.T) {
			got, err := run(t, "reconcile", "--date", date, "--format", "json")
			if date == "2026-03-14" {
				out = got
			}
			want, wantErr := inProcessReconcile(t, date)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report through the server (-in process +served):\n%s", diff)
			}
			if wantErr == "" && err != nil || wantErr != "" && (err == nil || err.Error() != wantErr) {
				t.Errorf("error = %v, want %q", err, wantErr)
			}
		})
	}
	// What the report says, beyond agreeing with the in-process one (and
	// failing the command, as the in-process report's error says).
	var rep reconcile.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("reconcile --format json: %v\n%s", err, out)
	}
	var got []string
	for _, c := range rep.Countries {
		got = append(got, fmt.Sprintf("%s %s batch %s real time %s invalid %s residual %s", c.Pais, c.Status, measures(c.Batch), measures(c.RealTime), measures(c.Invalid), measures(c.Residual)))
	}
	for _, h := range rep.Hours {
		got = append(got, fmt.Sprintf("hour %s %s real time %s, %d invalid", h.WindowStart.Format(time.RFC3339), h.Pais, measures(h.RealTime), h.Invalid))
	}
	for _, d := range rep.Explanations {
		got = append(got, fmt.Sprintf("drop %s %s explains %s, invalid: %t", d.PedidoID, d.Pais, measures(d.Batch), strings.HasPrefix(d.Reason, "invalid: ")))
	}
	want := []string{
		"ES unexplained batch 179.8/1/2 real time 89.9/1/1 invalid 179.8/1/2 residual -89.9/-1/-1",
		"hour 2026-03-14T16:00:00Z ES real time 89.9/1/1, 1 invalid",
		"drop PED-2026-0314-0002 ES explains 179.8/1/2, invalid: true",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func measures(m window.Measures) string {
	return fmt.Sprintf("%s/%d/%d", m.Importe, m.Pedidos, m.Unidades)
}

// inProcessReconcile is the report, as `reconcile --format json` prints
// it, read from the shared server's warehouse in this process, and the
// command's error text ("" for none).
func inProcessReconcile(t *testing.T, date string) (string, string) {
	t.Helper()
	rep, err := reconcile.Run(context.Background(), shared.App.Warehouse, reconcile.Request{Date: date, Aggregation: "ventas_hora_pais", Location: time.UTC})
	if err != nil {
		t.Fatalf("reconcile in process: %v", err)
	}
	var out bytes.Buffer
	if err := render.JSON(&out, rep); err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		return out.String(), ""
	}
	return out.String(), "reconcile " + date + ": unexplained differences in " + strings.Join(rep.Unexplained, ", ")
}
