package stack

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
)

// erpColumns are the lineas_pedido columns the ERP cases compare.
var erpColumns = []string{"pedido_id", "linea", "fecha", "sku", "cantidad", "precio_unitario", "importe", "cliente_id", "pais"}

// TestERPExports drops the ERP's export variants into the landing bucket as
// the ERP does (an upload to Cloud Storage, delivered by Eventarc to the
// IngestCSV service) and checks each outcome as deployed: the ledger record,
// the rows in BigQuery, the quarantine file and the process's log. Only the
// deployed contracts (internal/contract/feeds) apply: the test feeds of
// testdata/erp/feeds are not in the binary.
func TestERPExports(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	s.BigQuery.FailOnViolations(t)
	ctx := testContext(t, 2*time.Minute)
	l := s.ledger(t)

	t.Run("extra column is drift, not silence", func(t *testing.T) {
		rec := drop(ctx, t, s, l, "exportaciones/2026/03/20/pedidos-erp-canal.csv", read(t, "erp/pedidos-erp-canal.csv"), "")
		if diff := cmp.Diff(erpOutcome{ledger.Done, 2, 2, 0, ""}, outcomeOf(rec)); diff != "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
		wantDrift := &ledger.Drift{Added: []string{"canal"}, Missing: []string{"cliente_id"}}
		if diff := cmp.Diff(wantDrift, rec.Drift); diff != "" {
			t.Errorf("ledger drift (-want +got):\n%s", diff)
		}
		want := erpTable(
			"PED-7001  1  2026-03-20  MOCH-40L-AZ  2  89.9  179.8  NULL  ES",
			"PED-7002  1  2026-03-20  GORRO-LANA   1  12    12     NULL  PT",
		)
		if diff := cmp.Diff(want, loaded(s, "PED-70")); diff != "" {
			t.Errorf("lineas_pedido (-want +got):\n%s", diff)
		}
		done := logLines(t, s, "file done", rec.Key)
		if len(done) != 1 {
			t.Fatalf("%d 'file done' lines for %s, want 1", len(done), rec.Key)
		}
		got := []any{done[0]["drift_added"], done[0]["drift_missing"]}
		if diff := cmp.Diff([]any{[]any{"canal"}, []any{"cliente_id"}}, got); diff != "" {
			t.Errorf("IngestCSV's outcome line, drift fields (-want +got):\n%s", diff)
		}
		var drift []string
		for _, m := range logLines(t, s, "schema drift", rec.Key) {
			drift = append(drift, m["severity"].(string)+" "+m["feed"].(string)+" "+m["change"].(string)+" "+m["column"].(string))
		}
		if diff := cmp.Diff([]string{"WARNING lineas_pedido added canal", "WARNING lineas_pedido missing cliente_id"}, drift); diff != "" {
			t.Errorf("IngestCSV's schema drift lines, which the log-based metric counts (-want +got):\n%s", diff)
		}
	})

	// Read through the production client, an object stored with
	// Content-Encoding: gzip arrives inflated by Go's transport
	// (objects.TestOpenInflatesStoredGzip): the ingest sees CSV text, and
	// the ledger still keys on the MD5 of the stored bytes. A .csv.gz name
	// is internal/ingest's TestERPGzip.
	t.Run("gzip stored with Content-Encoding", func(t *testing.T) {
		gz := read(t, "erp/pedidos-erp.csv.gz")
		rec := drop(ctx, t, s, l, "exportaciones/2026/03/23/pedidos-erp.csv", gz, "gzip")
		if diff := cmp.Diff(erpOutcome{ledger.Done, 3, 2, 1, ""}, outcomeOf(rec)); diff != "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
		sum := md5.Sum(gz)
		if want := base64.StdEncoding.EncodeToString(sum[:]); rec.MD5 != want {
			t.Errorf("ledger MD5 %s, want %s (the stored gzip bytes)", rec.MD5, want)
		}
		want := erpTable(
			"PED-7201  1  2026-03-22  MOCH-40L-AZ  1  89.9   89.9  CLI-9  ES",
			"PED-7201  2  2026-03-22  FRONTAL-400  2  39.95  79.9  CLI-9  ES",
		)
		if diff := cmp.Diff(want, loaded(s, "PED-72")); diff != "" {
			t.Errorf("lineas_pedido (-want +got):\n%s", diff)
		}
		q := quarantined(ctx, t, s, rec.Quarantine)
		if len(q) != 1 || q[0][2] != `PED-7202,1,2026-03-22,BOTA-TREK-42,0,"129,00",CLI-8,IT` {
			t.Errorf("quarantine %q, want the zero quantity as its decompressed raw line", q)
		}
	})

	// Go's transport inflates it (unbounded, but streaming); the ingest
	// bounds the text by the object's stored size instead. A .csv.gz name
	// is bounded by the gzip ratio: internal/ingest's TestERPGzip.
	t.Run("zip bomb stored with Content-Encoding", func(t *testing.T) {
		rec := drop(ctx, t, s, l, "exportaciones/2026/03/26/pedidos-bomba.csv", read(t, "erp/pedidos-bomba.csv.gz"), "gzip")
		got := outcomeOf(rec)
		if reason := "content expands more than 200 times its stored 65370 bytes"; got.State != ledger.Rejected || !strings.HasPrefix(got.Reason, reason) {
			t.Errorf("state %s, reason %q; want REJECTED, %q...", got.State, got.Reason, reason)
		}
		if got.Read != 0 || got.Loaded != 0 || got.Quarantined != 0 || rec.Quarantine != "" {
			t.Errorf("counts %d/%d/%d, quarantine %q: want nothing read, loaded or quarantined", got.Read, got.Loaded, got.Quarantined, rec.Quarantine)
		}
		if rows := loaded(s, "PED-75"); rows != erpTable() {
			t.Errorf("lineas_pedido has rows of the bomb:\n%s", rows)
		}
		if lines := logLines(t, s, "file rejected", rec.Key); len(lines) != 1 || lines[0]["severity"] != "ERROR" {
			t.Errorf("IngestCSV logged %v for the bomb, want one ERROR 'file rejected' line", lines)
		}
		if !s.Processes["IngestCSV"].Running() {
			t.Error("IngestCSV is no longer running after the bomb")
		}
	})

	// The deployed lineas_pedido contract declares utf-8, and no deployed
	// feed declares windows-1252 (only the test feed pedidos_cp1252 of
	// testdata/erp/feeds does, which the binary does not embed). As
	// deployed, a windows-1252 export therefore loads nothing garbled: each
	// row with a non-UTF-8 byte goes to quarantine with its bytes unchanged.
	t.Run("windows-1252 under the deployed utf-8 contract", func(t *testing.T) {
		raw := read(t, "erp/pedidos-erp-cp1252.csv")
		rec := drop(ctx, t, s, l, "exportaciones/2026/03/24/pedidos-erp-cp1252.csv", raw, "")
		if diff := cmp.Diff(erpOutcome{ledger.Done, 3, 0, 3, ""}, outcomeOf(rec)); diff != "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
		if rows := loaded(s, "PED-73"); rows != erpTable() {
			t.Errorf("lineas_pedido has rows of the windows-1252 export:\n%s", rows)
		}
		var want [][]string
		for i, line := range strings.Split(strings.TrimRight(string(raw), "\r\n"), "\n")[1:] {
			want = append(want, []string{strconv.Itoa(i + 2), contract.CodeInvalidUTF8, strings.TrimRight(line, "\r")})
		}
		if diff := cmp.Diff(want, quarantined(ctx, t, s, rec.Quarantine)); diff != "" {
			t.Errorf("quarantine: line, code, raw bytes (-want +got):\n%s", diff)
		}
	})
}

// erpOutcome is what the ledger says of a file.
type erpOutcome struct {
	State                     ledger.State
	Read, Loaded, Quarantined int64
	Reason                    string
}

func outcomeOf(rec ledger.Record) erpOutcome {
	return erpOutcome{rec.State, rec.Counts.Read, rec.Counts.Loaded, rec.Counts.Quarantined, rec.Reason}
}

// loaded renders the lineas_pedido rows whose pedido_id starts with prefix
// as the demo prints tables.
func loaded(s *Stack, prefix string) string {
	var rows []map[string]any
	for _, r := range s.BigQuery.Rows("lineas_pedido") {
		if id, _ := r["pedido_id"].(string); strings.HasPrefix(id, prefix) {
			rows = append(rows, r)
		}
	}
	return table(rows, erpColumns, 2)
}

// erpTable builds the expected table from rows whose cells are separated by
// two or more spaces.
func erpTable(rows ...string) string {
	var out []map[string]any
	for _, r := range rows {
		var cells []string
		for _, c := range strings.Split(r, "  ") {
			if c = strings.TrimSpace(c); c != "" {
				cells = append(cells, c)
			}
		}
		m := map[string]any{}
		for i, c := range erpColumns {
			if i < len(cells) && cells[i] != "NULL" {
				m[c] = cells[i]
				if c == "precio_unitario" || c == "importe" {
					// NUMERIC is shown with its scale, as cell() shows what BigQuery returns.
					m[c] = render.Scaled(cells[i])
				}
			}
		}
		out = append(out, m)
	}
	return table(out, erpColumns, 2)
}

// quarantined is quarantineRows without the message: the source line,
// the reason code and the raw text.
func quarantined(ctx context.Context, t *testing.T, s *Stack, object string) [][]string {
	t.Helper()
	var out [][]string
	for _, r := range quarantineRows(ctx, t, s, object) {
		out = append(out, []string{r[0], r[1], r[3]})
	}
	return out
}

// logLines returns IngestCSV's structured log entries with the message
// given about one object.
func logLines(t *testing.T, s *Stack, message string, key ledger.Key) []map[string]any {
	t.Helper()
	return logEntries(t, s.Processes["IngestCSV"].Output(), func(m map[string]any) bool {
		return m["message"] == message && m["object"] == key.String()
	})
}

// logEntries are the JSON log lines of a process's output that keep
// accepts; every line that starts as JSON must be JSON.
func logEntries(t *testing.T, output string, keep func(m map[string]any) bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(output, "\n") {
		if line = strings.TrimSpace(line); !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}
