package status_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
)

const landing = ingesttest.Landing

var update = flag.Bool("update", false, "rewrite golden files")

// morning is when the person asks.
var morning = time.Date(2026, 3, 15, 8, 0, 0, 0, time.UTC)

// night writes a night's worth of ledger records and orders into real
// engines (the embedded store, DuckDB, the stream processor) and returns
// the sources a report reads.
func night(t *testing.T) status.Sources {
	t.Helper()
	// The ingest service's real parts (see ingesttest): the report reads
	// what they hold.
	r := ingesttest.NewParts(t, landing, ingesttest.Quarantine)
	ctx := context.Background()
	at := func(hhmm string) time.Time {
		d, err := time.Parse("2006-01-02 15:04", hhmm)
		if err != nil {
			t.Fatal(err)
		}
		return d.UTC()
	}
	file := func(name string, gen int64, md5 string, start time.Time, finish func(ledger.Record) ledger.Record) {
		t.Helper()
		key := ledger.Key{Bucket: landing, Object: name, Generation: gen}
		c, err := r.Ledger.Claim(ctx, key, md5, "owner-"+name, start)
		if err != nil {
			t.Fatal(err)
		}
		if finish == nil || c.Decision != ledger.Proceed {
			return
		}
		if err := r.Ledger.Finish(ctx, finish(c.Record), start.Add(90*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	done := func(read, loaded int64, rejects map[string]int64) func(ledger.Record) ledger.Record {
		return func(rec ledger.Record) ledger.Record {
			rec.State, rec.Feed = ledger.Done, "lineas_pedido"
			rec.Counts = ledger.Counts{Read: read, Loaded: loaded, Quarantined: read - loaded, Rejects: rejects}
			if read > loaded {
				rec.Quarantine = "cuarentena/lineas_pedido/" + strings.TrimSuffix(rec.Key.Object, ".csv") + ".g1.csv"
			}
			return rec
		}
	}
	outcome := func(state ledger.State, reason string) func(ledger.Record) ledger.Record {
		return func(rec ledger.Record) ledger.Record {
			rec.State, rec.Reason = state, reason
			if state != ledger.Skipped {
				rec.Feed = "lineas_pedido"
			}
			return rec
		}
	}
	file("exportaciones/2026/03/13/pedidos-erp.csv", 1, "md5-old", at("2026-03-14 02:00"), done(140000, 140000, nil))
	file("exportaciones/2026/03/14/pedidos-erp.csv", 1, "md5-a", at("2026-03-15 02:00"), done(150000, 149997, map[string]int64{"fecha:invalid_date": 2, "cantidad:below_min": 1}))
	file("exportaciones/2026/03/14/pedidos-erp-copia.csv", 1, "md5-a", at("2026-03-15 02:05"), nil) // same content: a duplicate
	file("exportaciones/2026/03/14/vacio.csv", 1, "md5-empty", at("2026-03-15 02:10"), outcome(ledger.Rejected, "empty object: no header row"))
	file("exportaciones/2026/03/notas.txt", 1, "", at("2026-03-15 02:15"), outcome(ledger.Skipped, "no contract matches this object name"))
	file("exportaciones/2026/03/14/tarde.csv", 1, "md5-b", at("2026-03-15 03:00"), outcome(ledger.Failed, "load into lineas_pedido: warehouse unavailable"))
	file("exportaciones/2026/03/15/pedidos-erp.csv", 1, "md5-c", at("2026-03-15 07:55"), nil) // still running
	file("exportaciones/2026/03/12/colgado.csv", 1, "md5-d", at("2026-03-13 09:00"), nil)     // a crashed attempt, never redelivered

	proc, err := stream.New(r.Store, r.Warehouse, []window.Spec{window.Defaults()}, contract.IsCountry, logging.Discard())
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(id, body, eventTime string, now time.Time) {
		t.Helper()
		d := order.Delivery{Message: order.Message{Data: []byte(body), Attributes: map[string]string{"momento_evento": eventTime}, MessageID: id, PublishTime: now}}
		if _, err := proc.Handle(ctx, d, now); err != nil {
			t.Fatal(err)
		}
	}
	orderJSON := func(id, country string) string {
		return `{"pedido_id":"` + id + `","pais":"` + country + `","importe_total":"10.00","lineas":[{"sku":"A","cantidad":1,"precio_unitario":"10.00"}]}`
	}
	deliver("m1", orderJSON("P-1", "ES"), "2026-03-15T06:10:00Z", at("2026-03-15 07:30"))
	deliver("m2", orderJSON("P-2", "FR"), "2026-03-15T06:20:00Z", at("2026-03-15 07:31"))
	deliver("m3", orderJSON("P-3", "ES"), "2026-03-15T07:05:00Z", at("2026-03-15 07:32"))
	deliver("m4", `{"pedido_id":"P-4",`, "2026-03-15T07:06:00Z", at("2026-03-15 07:33"))
	deliver("m5", orderJSON("P-5", "ZZ"), "2026-03-15T07:06:00Z", at("2026-03-15 07:34"))
	if _, err := proc.Tick(ctx, at("2026-03-15 07:40")); err != nil {
		t.Fatal(err)
	}
	deliver("m6", orderJSON("P-6", "PT"), "2026-03-15T03:30:00Z", at("2026-03-15 07:45")) // its window closed at 06:00
	return status.Sources{Ledger: r.Ledger, Warehouse: r.Warehouse, Stream: proc, Now: func() time.Time { return morning }}
}

// TestStatusReport renders the morning report of a night with every kind
// of outcome and compares it with the golden file.
func TestStatusReport(t *testing.T) {
	src := night(t)
	rep := status.BuildReport(context.Background(), src, status.Options{})
	if len(rep.Problems) > 0 {
		t.Fatalf("problems: %v", rep.Problems)
	}
	var buf bytes.Buffer
	if err := status.WriteText(&buf, rep); err != nil {
		t.Fatal(err)
	}
	golden(t, "status.golden", buf.String())

	f := rep.Files
	wantStates := map[ledger.State]int{ledger.Done: 1, ledger.Duplicate: 1, ledger.Rejected: 1, ledger.Skipped: 1, ledger.Failed: 1, ledger.InProgress: 1}
	if diff := cmp.Diff(wantStates, f.States); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int64{"fecha:invalid_date": 2, "cantidad:below_min": 1}, f.Rejects); diff != "" {
		t.Errorf("rejects (-want +got):\n%s", diff)
	}
	var attention []string
	for _, l := range f.Attention {
		attention = append(attention, string(l.State)+" "+l.Object)
	}
	wantAttention := []string{
		"IN_PROGRESS gs://alpinashop-catalogo/exportaciones/2026/03/15/pedidos-erp.csv#1",
		"FAILED gs://alpinashop-catalogo/exportaciones/2026/03/14/tarde.csv#1",
		"REJECTED gs://alpinashop-catalogo/exportaciones/2026/03/14/vacio.csv#1",
		"IN_PROGRESS gs://alpinashop-catalogo/exportaciones/2026/03/12/colgado.csv#1",
	}
	if diff := cmp.Diff(wantAttention, attention); diff != "" {
		t.Errorf("attention (-want +got):\n%s", diff)
	}
	if a := f.Attention[0]; a.RunningSeconds != 300 || a.LeaseLeftSeconds != 300 || a.LeaseExpired {
		t.Errorf("running attempt: %+v; want 5 min running, 5 min of lease left", a)
	}
	if !f.Attention[3].LeaseExpired {
		t.Errorf("crashed attempt: %+v; want its lease expired", f.Attention[3])
	}
	if len(rep.Stream) != 1 || rep.Stream[0].Watermark.IsZero() || rep.Stream[0].OpenWindows != 3 {
		t.Errorf("stream: %+v; want a watermark and 3 open (window, key)s", rep.Stream)
	}
	if d := rep.Discarded; d == nil || d.Invalid != 2 || d.TooLate != 1 {
		t.Errorf("discarded: %+v; want 2 invalid, 1 too late", d)
	}
}

// TestHandler serves the same report as JSON and as text.
func TestHandler(t *testing.T) {
	src := night(t)
	srv := httptest.NewServer(status.Handler(src))
	defer srv.Close()
	want := status.BuildReport(context.Background(), src, status.Options{Since: 12 * time.Hour})

	resp, err := http.Get(srv.URL + "?since=12h")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got status.Report
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON report (-want +got):\n%s", diff)
	}

	tests := []struct {
		name, query string
		status      int
		contains    string
	}{
		{name: "text", query: "?format=text", status: 200, contains: "Files: 6 (DONE 1, DUPLICATE 1, SKIPPED 1, REJECTED 1, FAILED 1, IN_PROGRESS 1)"},
		{name: "fewer files", query: "?format=text&files=2", status: 200, contains: "... and 4 older"},
		{name: "bad since", query: "?since=yesterday", status: 400, contains: "since"},
		{name: "bad files", query: "?files=0", status: 400, contains: "files"},
		{name: "bad format", query: "?format=xml", status: 400, contains: "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Get(srv.URL + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(b.String(), tt.contains) {
				t.Errorf("HTTP %d %q; want %d containing %q", resp.StatusCode, b.String(), tt.status, tt.contains)
			}
		})
	}
}

// TestStatusWithoutSources: a process missing a part still answers, and
// says what it could not read.
func TestStatusWithoutSources(t *testing.T) {
	rep := status.BuildReport(context.Background(), status.Sources{Now: func() time.Time { return morning }}, status.Options{})
	want := status.Report{
		Now: morning, Since: morning.Add(-24 * time.Hour),
		Problems: []string{
			"files: no ledger in this process",
			"stream: no stream processor in this process",
			"discarded: no warehouse in this process",
		},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}
