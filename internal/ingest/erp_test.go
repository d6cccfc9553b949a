package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
)

// erpDir holds the exports as the ERP really writes them (issue 12).
const erpDir = "../../testdata/erp"

// erpRig is a rig with the embedded feeds plus testdata/erp/feeds, logging
// JSON into a buffer.
type erpRig struct {
	*rig
	log bytes.Buffer
}

func newERPRig(t *testing.T) *erpRig {
	t.Helper()
	files := map[string][]byte{}
	for _, pattern := range []string{"../contract/feeds/*.json", erpDir + "/feeds/*.json"} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			t.Fatalf("glob %s: %v (%d files)", pattern, err, len(paths))
		}
		for _, p := range paths {
			files[p] = readFile(t, p)
		}
	}
	p := ingesttest.NewParts(t, landing, quarantine)
	var err error
	if p.Feeds, err = contract.Parse(files); err != nil {
		t.Fatal(err)
	}
	r := &erpRig{}
	r.rig = newRigOn(t, p, nil, logging.New(&r.log, slog.LevelInfo))
	return r
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// drop uploads a fixture of testdata/erp under name and ingests it.
func (r *erpRig) drop(fixture, name string) ledger.Record {
	r.t.Helper()
	return r.ingest(r.upload(name, string(readFile(r.t, filepath.Join(erpDir, fixture)))))
}

// quarantined returns the quarantine file's rows, header excluded.
func (r *erpRig) quarantined(rec ledger.Record) [][]string {
	r.t.Helper()
	if rec.Quarantine == "" {
		return nil
	}
	return r.quarantineRows(rec.Quarantine)[1:]
}

func (r *erpRig) logLines(msg string) []map[string]any {
	r.t.Helper()
	return logLines(r.t, r.log.String(), msg)
}

// logLines returns the JSON log lines of logs whose message is msg.
func logLines(t *testing.T, logs, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["message"] == msg {
			out = append(out, m)
		}
	}
	return out
}

type counts struct{ Read, Loaded, Quarantined int64 }

func countsOf(rec ledger.Record) counts {
	return counts{rec.Counts.Read, rec.Counts.Loaded, rec.Counts.Quarantined}
}

func TestERPExtraColumnIsDriftNotSilence(t *testing.T) {
	r := newERPRig(t)
	rec := r.drop("pedidos-erp-canal.csv", "exportaciones/2026/03/20/pedidos-erp.csv")
	stored, ok, err := r.Ledger.Get(context.Background(), rec.Key)
	if err != nil || !ok {
		t.Fatalf("ledger record: %v, %v", ok, err)
	}
	done := r.logLines("file done")
	if len(done) != 1 {
		t.Fatalf("%d 'file done' lines, want 1:\n%s", len(done), r.log.String())
	}
	var driftLines []string
	for _, l := range r.logLines("schema drift") {
		driftLines = append(driftLines, l["feed"].(string)+" "+l["change"].(string)+" "+l["column"].(string))
	}
	drift := &ledger.Drift{Added: []string{"canal"}, Missing: []string{"cliente_id"}}
	want := []any{counts{2, 2, 0}, drift, drift, []any{"canal"}, []any{"cliente_id"},
		[]string{"lineas_pedido added canal", "lineas_pedido missing cliente_id"}}
	got := []any{countsOf(rec), rec.Drift, stored.Drift, done[0]["drift_added"], done[0]["drift_missing"],
		driftLines}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts, drift returned and stored, outcome line's drift fields, schema drift lines "+
			"(-want +got):\n%s", diff)
	}

	// A redelivery logs the outcome again but not the drift: the metric
	// counts files, not deliveries.
	r.log.Reset()
	if _, err := r.svc.Ingest(context.Background(), ingest.Object{Bucket: landing, Name: rec.Key.Object, Generation: rec.Key.Generation, MD5: rec.MD5}); err != nil {
		t.Fatal(err)
	}
	if n := len(r.logLines("schema drift")); n != 0 {
		t.Errorf("redelivery logged %d schema drift lines, want 0", n)
	}
}

func TestERPUnknownColumnRejectsWhenTheContractSaysSo(t *testing.T) {
	r := newERPRig(t)
	rec := r.drop("pedidos-erp-canal.csv", "exportaciones-estricto/pedidos-erp.csv")
	got := []any{rec.State, rec.Reason, countsOf(rec), rec.Drift, r.rows("lineas_pedido")}
	const reason = "columns not in the contract (on_unknown_columns is reject): canal"
	drift := &ledger.Drift{Added: []string{"canal"}, Missing: []string{"cliente_id"}}
	want := []any{ledger.Rejected, reason, counts{2, 0, 2}, drift, "0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state, reason, counts, drift, rows loaded (-want +got):\n%s", diff)
	}
}

func TestERPSemicolonDecimalCommaDayFirst(t *testing.T) {
	r := newERPRig(t)
	rec := r.drop("pedidos-erp-punto-y-coma.csv", "exportaciones/2026/03/20/pedidos-erp.csv")
	got := []any{countsOf(rec), rec.Drift}
	if diff := cmp.Diff([]any{counts{4, 3, 1}, (*ledger.Drift)(nil)}, got); diff != "" {
		t.Errorf("counts, drift (-want +got):\n%s", diff)
	}
	rows := r.query("SELECT pedido_id, linea, CAST(fecha AS VARCHAR), CAST(precio_unitario AS VARCHAR), coalesce(cliente_id, 'NULL') FROM lineas_pedido ORDER BY pedido_id, linea")
	want := [][]string{
		{"PED-7101", "1", "2026-03-20", "1234.500000000", "CLI-1"},
		{"PED-7101", "2", "2026-03-20", "89.900000000", "Pérez; Ana"},
		{"PED-7102", "1", "2026-03-21", "12.000000000", "NULL"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("loaded rows (-want +got):\n%s", diff)
	}
	q := r.quarantined(rec)
	if len(q) != 1 || q[0][1] != "precio_unitario:invalid_numeric" || q[0][3] != "PED-7103;1;21/03/2026;GORRO-LANA;1;1.23,4;CLI-2;FR" {
		t.Errorf("quarantine %q, want the badly grouped price, raw", q)
	}
}

// TestERPGzip: a gzip export loads, whether named .csv.gz or stored with
// Content-Encoding: gzip; a bad stream rejects the file, committing nothing
// (every kind of bad stream: TestDecode).
func TestERPGzip(t *testing.T) {
	good := readFile(t, filepath.Join(erpDir, "pedidos-erp.csv.gz"))
	bomb := readFile(t, filepath.Join(erpDir, "pedidos-bomba.csv.gz"))
	const day = "exportaciones/2026/03/22/"
	tests := []struct {
		name, object string
		content      []byte
		reason       string // prefix of a rejection; "" for DONE with 2 rows loaded, 1 quarantined
	}{
		{name: "gz suffix", object: day + "pedidos-erp.csv.gz", content: good},
		{name: "content-encoding gzip", object: day + "pedidos-erp.csv", content: good},
		{name: "zip bomb", object: day + "pedidos-bomba.csv.gz", content: bomb, reason: "gzip expands more than 200 times"},
		{name: "named gz but plain", object: day + "falso.csv.gz", content: []byte("pedido_id\r\n"), reason: "named .gz but not gzip content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newERPRig(t)
			rec := r.ingest(r.upload(tt.object, string(tt.content)))
			want := []any{ledger.Done, counts{3, 2, 1}, "2", [][]string{{"4", "cantidad:below_min", "cantidad: must be > 0, got 0",
				`PED-7202,1,2026-03-22,BOTA-TREK-42,0,"129,00",CLI-8,IT`}}}
			if tt.reason != "" {
				want = []any{ledger.Rejected, counts{}, "0", [][]string(nil)}
				if !strings.HasPrefix(rec.Reason, tt.reason) {
					t.Errorf("reason %q, want %q...", rec.Reason, tt.reason)
				}
			}
			got := []any{rec.State, countsOf(rec), r.rows("lineas_pedido"), r.quarantined(rec)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("state, counts, rows loaded, quarantine (-want +got):\n%s", diff)
			}
			if tt.reason == "" && !strings.HasPrefix(rec.Quarantine, "cuarentena/lineas_pedido/"+day+"pedidos-erp.g") {
				t.Errorf("quarantine name %s, want the .csv.gz suffix replaced", rec.Quarantine)
			}
		})
	}
}

func TestERPWindows1252(t *testing.T) {
	r := newERPRig(t)
	rec := r.drop("pedidos-erp-cp1252.csv", "exportaciones-cp1252/pedidos-erp.csv")
	if diff := cmp.Diff(counts{3, 2, 1}, countsOf(rec)); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	rows := r.query("SELECT cliente_id FROM lineas_pedido ORDER BY pedido_id")
	if diff := cmp.Diff([][]string{{"Muñoz Ibáñez"}, {"“Peña” €"}}, rows); diff != "" {
		t.Errorf("decoded text (-want +got):\n%s", diff)
	}
	q := r.quarantined(rec)
	if len(q) != 1 || q[0][1] != contract.CodeInvalidCP1252 || q[0][3] != "PED-7303,1,2026-03-23,GORRO-LANA,1,\"12,00\",Jos\x81,ES" {
		t.Errorf("quarantine %q, want the undefined byte, raw", q)
	}
	a, err := r.GCS.Stat(context.Background(), quarantine, rec.Quarantine)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Metadata[ingest.MetaSourceEncoding]; got != contract.Windows1252 {
		t.Errorf("quarantine metadata %s = %q, want %q", ingest.MetaSourceEncoding, got, contract.Windows1252)
	}
}

func TestERPNULBytesAreRowRejections(t *testing.T) {
	r := newERPRig(t)
	rec := r.drop("pedidos-erp-nul.csv", "exportaciones/2026/03/24/pedidos-erp.csv")
	got := []any{rec.State, countsOf(rec), rec.Counts.Rejects}
	want := []any{ledger.Done, counts{200, 198, 2}, map[string]int64{contract.CodeNUL: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("state, counts, rejects (-want +got):\n%s", diff)
	}
	if n := r.query("SELECT count(*) FROM lineas_pedido WHERE contains(sku, chr(0)) OR contains(cliente_id, chr(0))")[0][0]; n != "0" {
		t.Errorf("%s rows with a NUL loaded", n)
	}
	var lines []string
	for _, q := range r.quarantined(rec) {
		lines = append(lines, q[0])
	}
	if diff := cmp.Diff([]string{"4", "181"}, lines); diff != "" {
		t.Errorf("quarantined lines (-want +got):\n%s", diff)
	}
}
