package client_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/status"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// One local server, on a virtual clock, serves every test of this package;
// TestMain stops it and removes its data folder.
var srv *local.Server

func TestMain(m *testing.M) {
	data, err := os.MkdirTemp("", "alpipe-client-test-")
	if err == nil {
		clock := clock.Virtual(time.Date(2026, 3, 15, 8, 0, 0, 0, time.UTC))
		srv, err = local.Start(context.Background(), local.Options{
			Addr: "127.0.0.1:0", DataDir: data, Clock: clock, Logger: logging.Discard(),
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "start local server:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := srv.Shutdown("tests done"); err != nil {
		fmt.Fprintln(os.Stderr, "stop the local server:", err)
	}
	os.RemoveAll(data)
	os.Exit(code)
}

func storage(t *testing.T) *objects.GCS {
	t.Helper()
	gcs, closeFn, err := client.Server{URL: srv.URL}.Storage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return gcs
}

// upload writes an order file of n rows to the local landing bucket and
// returns how many of its rows are valid.
func upload(t *testing.T, name string, n int) int {
	t.Helper()
	var b strings.Builder
	b.WriteString("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n")
	valid := 0
	for i := 1; i <= n; i++ {
		qty := "1"
		if i%9 == 0 {
			qty = "0"
		} else {
			valid++
		}
		fmt.Fprintf(&b, "%s-%04d,1,2025-01-15,SKU-%d,%s,\"3,20\",CLI-%d,PT\n", strings.ReplaceAll(name, "/", "-"), i, i%5, qty, i)
	}
	path := filepath.Join(t.TempDir(), "f.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (client.Server{URL: srv.URL}).Upload(context.Background(), localapi.LandingBucket, name, path); err != nil {
		t.Fatal(err)
	}
	return valid
}

// stopAfter cancels the run when its n-th object finishes, as Ctrl-C.
type stopAfter struct {
	reingest.Ingester
	n      int64
	done   atomic.Int64
	cancel context.CancelFunc
}

func (s *stopAfter) Ingest(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
	rec, err := s.Ingester.Ingest(ctx, a)
	if s.done.Add(1) == s.n {
		s.cancel()
	}
	return rec, err
}

// TestBackfillThroughServer backfills a prefix of the local landing bucket
// through the server's IngestCSV, is interrupted, resumes, and finally only
// skips; every row is loaded once.
func TestBackfillThroughServer(t *testing.T) {
	gcs := storage(t)
	server := client.Server{URL: srv.URL}
	const files = 6
	want := map[string]string{}
	total := 0
	for d := 1; d <= files; d++ {
		name := fmt.Sprintf("exportaciones/2025/01/%02d/pedidos.csv", d)
		valid := upload(t, name, 30+d)
		want["gs://"+localapi.LandingBucket+"/"+name] = strconv.Itoa(valid)
		total += valid
	}
	upload(t, "exportaciones/2025/02/01/fuera.csv", 5) // outside the prefix

	// backfill runs b over the prefix, on the server's ledger.
	backfill := func(ctx context.Context, b reingest.Backfill) reingest.Summary {
		b.Objects, b.Ledger = gcs, server
		sum, err := b.Run(ctx, localapi.LandingBucket, "exportaciones/2025/01/")
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lines strings.Builder
	printer := reingest.NewProgressPrinter(&lines, false)
	first := backfill(ctx, reingest.Backfill{Ingest: &stopAfter{Ingester: server, n: 2, cancel: cancel},
		Concurrency: 2, Grace: 30 * time.Second, Progress: printer.Update})
	// With a grace period the objects in flight finish: none is cut short.
	if !first.Interrupted || first.Loaded < 2 || first.Loaded == files || len(first.Failed) > 0 {
		t.Fatalf("first run: %+v; want an interruption after 2 of %d files, nothing failed", first, files)
	}
	if n := strings.Count(lines.String(), "\n"); int64(n) != first.Loaded {
		t.Errorf("%d progress lines for %d files:\n%s", n, first.Loaded, lines.String())
	}

	second := backfill(context.Background(), reingest.Backfill{Ingest: server, Concurrency: 2})
	if second.Interrupted || len(second.Failed) > 0 || second.Skipped != first.Loaded || second.Loaded != files-first.Loaded {
		t.Errorf("second run: %+v; want the %d files the first left, after skipping %d", second, files-first.Loaded, first.Loaded)
	}
	third := backfill(context.Background(), reingest.Backfill{Ingest: server})
	if third.Skipped != files || third.Loaded != 0 {
		t.Errorf("third run: %+v; want all %d skipped", third, files)
	}

	got := map[string]string{}
	res, err := server.Query(context.Background(), "SELECT source_object, COUNT(*) FROM lineas_pedido WHERE source_object LIKE 'gs://"+localapi.LandingBucket+"/exportaciones/2025/01/%' GROUP BY 1")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Rows {
		got[row[0]] = row[1]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows per file (-want +got):\n%s", diff)
	}
	if got := first.RowsLoaded + second.RowsLoaded; got != int64(total) {
		t.Errorf("summaries count %d rows loaded; want %d", got, total)
	}
}

// TestRequeueThroughServer: the seed file quarantines three rows; a person
// fixes one in a local copy and re-queues it: 1 loaded, 2 quarantined again.
func TestRequeueThroughServer(t *testing.T) {
	ctx := context.Background()
	gcs := storage(t)
	server := client.Server{URL: srv.URL}
	rec, err := server.Drop(ctx, "exportaciones/2026/03/14/pedidos-erp.csv",
		"../../testdata/exportaciones/2026/03/14/pedidos-erp.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Counts.Quarantined != 3 {
		t.Fatalf("seed file: %+v; want 3 rows quarantined", rec.Counts)
	}
	body, err := gcs.Open(ctx, localapi.QuarantineBucket, rec.Quarantine, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(body).ReadAll()
	body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		row[3] = strings.Replace(row[3], "2026-02-30", "2026-02-28", 1)
	}
	var fixed bytes.Buffer // the person's corrected copy
	if err := csv.NewWriter(&fixed).WriteAll(rows); err != nil {
		t.Fatal(err)
	}

	feeds, err := contract.Default()
	if err != nil {
		t.Fatal(err)
	}
	rq := &reingest.Requeue{Objects: gcs, Ingest: server, Feeds: feeds, LandingBucket: localapi.LandingBucket}
	req := reingest.RequeueRequest{Bucket: localapi.QuarantineBucket, Name: rec.Quarantine, Rows: &fixed}
	res, err := rq.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	reingest.WriteRequeue(&out, res, localapi.QuarantineBucket)
	for _, must := range []string{
		"status: DONE  rows read/loaded/quarantined: 3/1/2",
		"still wrong: cantidad:below_min 1",
		"still wrong: column_count 1",
		"back in quarantine: gs://" + localapi.QuarantineBucket +
			"/cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.requeue-",
	} {
		if !strings.Contains(out.String(), must) {
			t.Errorf("requeue output lacks %q:\n%s", must, out.String())
		}
	}
	got, err := server.Query(ctx,
		"SELECT COUNT(*), MIN(fecha) FROM lineas_pedido WHERE pedido_id = 'PED-2026-0314-0004'")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"1", "2026-02-28"}}, got.Rows); diff != "" {
		t.Errorf("fixed row (-want +got):\n%s", diff)
	}
}

// TestStatusThroughServer reads serve's report the way `alpipe status`
// does; an older serve, without the endpoint, is named as such.
func TestStatusThroughServer(t *testing.T) {
	ctx := context.Background()
	upload(t, "exportaciones/2026/03/16/estado.csv", 12)
	a, err := storage(t).Stat(ctx, localapi.LandingBucket, "exportaciones/2026/03/16/estado.csv")
	if err != nil {
		t.Fatal(err)
	}
	server := client.Server{URL: srv.URL}
	if _, err := server.Ingest(ctx, a); err != nil {
		t.Fatal(err)
	}
	rep, err := server.Status(ctx, status.DefaultSince, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 || rep.Files == nil || rep.Discarded == nil || !slices.ContainsFunc(rep.Stream, func(a status.StreamReport) bool { return a.Aggregation == "ventas_hora_pais" }) {
		t.Fatalf("report: %+v", rep)
	}
	key := ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}.String()
	var line *status.FileLine
	isKey := func(l status.FileLine) bool { return l.Object == key }
	if i := slices.IndexFunc(rep.Files.Recent, isKey); i >= 0 {
		line = &rep.Files.Recent[i]
	}
	if line == nil || line.State != ledger.Done || line.Read != 12 || line.Loaded != 11 || line.Rejects["cantidad:below_min"] != 1 {
		t.Errorf("report of %s: %+v", key, line)
	}

	old := httptest.NewServer(http.NotFoundHandler())
	defer old.Close()
	if _, err := (client.Server{URL: old.URL}).Status(ctx, status.DefaultSince, 50); err == nil || !strings.Contains(err.Error(), "no "+localapi.StatusPath+" endpoint") {
		t.Errorf("server without the endpoint: %v", err)
	}
}

// TestUploadRefusesBadNames: a name that Cloud Storage or the local folder
// layout refuses is refused before any request (objname's tests hold the
// rules). The server URL answers nothing, so a request would fail otherwise.
func TestUploadRefusesBadNames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(file, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := client.Server{URL: "http://127.0.0.1:1"}
	for _, tc := range []struct {
		name, bucket, object, want string
	}{
		{name: "newline", bucket: localapi.LandingBucket, object: "exportaciones/a\nb.csv", want: "control character U+000A"},
		{name: "parent segment", bucket: localapi.LandingBucket, object: "../alpinashop-cuarentena/x.csv", want: "empty, . or .. segment"},
		{name: "bucket with a path", bucket: "../alpinashop-catalogo", object: "x.csv", want: "bucket name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dead.Upload(context.Background(), tc.bucket, tc.object, file)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, client.ErrUnreachable) {
				t.Errorf("Upload = %v, want a refusal naming %q before any request", err, tc.want)
			}
		})
	}
}

// TestDeliverFailsBeforeHTTP: an event that never reaches the function is
// an error, not a silent success (drop used to print "GET /_local/ledger:
// HTTP 404" after an event with a newline in its subject never left); drop's
// Ingest then says why, and reports only a dead server as one.
func TestDeliverFailsBeforeHTTP(t *testing.T) {
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(fn.Close)
	for _, tc := range []struct {
		name, url, object string
		wantStatus        int
		wantErr           string // Deliver's; "" is no error
		wantIngest        string // Ingest's; "" skips it
		unreachable       bool   // Ingest's error is ErrUnreachable
	}{
		{name: "delivered", url: fn.URL, object: "exportaciones/x.csv", wantStatus: 200},
		{name: "newline in the subject", url: fn.URL, object: "exportaciones/a\nb.csv", wantErr: "invalid header field value", wantIngest: "event not delivered"},
		{name: "nothing listening", url: "http://127.0.0.1:1", object: "exportaciones/x.csv", wantErr: "connection refused",
			wantIngest: "is `alpipe serve` running", unreachable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := objects.Attrs{Bucket: localapi.LandingBucket, Name: tc.object, Generation: 1}
			e, err := client.FinalizeEvent(attrs, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			status, err := client.Deliver(context.Background(), tc.url, e)
			if status != tc.wantStatus || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Deliver = %d, %v; want %d and an error containing %q", status, err, tc.wantStatus, tc.wantErr)
			}
			if tc.wantIngest == "" {
				return
			}
			_, err = client.Server{URL: tc.url}.Ingest(context.Background(), attrs)
			if err == nil || !strings.Contains(err.Error(), tc.wantIngest) || errors.Is(err, client.ErrUnreachable) != tc.unreachable {
				t.Errorf("Ingest = %v, want an error containing %q (unreachable %v)", err, tc.wantIngest, tc.unreachable)
			}
		})
	}
}

// TestLinksNoServer keeps the client light (and the contract, the renderer
// and the ops packages it runs): a client command must not link
// the local server, the composition root or DuckDB (minutes of cgo build,
// and a second process must never open the server's files). stream prints
// its ticks and orders with render, so render linking stream or window,
// even through another package of ours, would undo the split or make a cycle.
func TestLinksNoServer(t *testing.T) {
	const module = "github.com/alpinashop/alpipe/"
	server := []string{module + "internal/local", module + "internal/setup", module + "internal/warehouse/duckdb",
		"github.com/marcboeker/go-duckdb", "github.com/duckdb/duckdb-go", "github.com/duckdb/duckdb-go-bindings"}
	for pkg, banned := range map[string][]string{
		"../client": server, "../localapi": server, "../reingest": server, "../status": server,
		"../render": append(server, module+"internal/stream", module+"internal/window"),
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}

// TestQueryTypedRunsAStatementOnce: a refused or timed-out query is not
// sent again (a 60 s timeout used to cost 120 s): the server already
// wraps it in its LIMIT and falls back to the plain statement itself.
func TestQueryTypedRunsAStatementOnce(t *testing.T) {
	tests := []struct {
		name   string
		status int
		msg    string
	}{
		{name: "timed out", status: http.StatusGatewayTimeout, msg: "query cancelled after 1m0s: ALPIPE_QUERY_TIMEOUT"},
		{name: "refused", status: http.StatusBadRequest, msg: `Catalog Error: Table with name nope does not exist!`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs []string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req localapi.QueryRequest
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					t.Errorf("decode the request: %v", err)
				}
				if strings.HasPrefix(req.SQL, "DESCRIBE ") {
					http.Error(w, "not describable", http.StatusBadRequest)
					return
				}
				runs = append(runs, req.SQL)
				http.Error(w, tt.msg, tt.status)
			}))
			defer ts.Close()
			_, err := client.Server{URL: ts.URL}.QueryTyped(t.Context(), "SELECT * FROM nope", 100, func(_, _ []string) warehouse.RowSink {
				return &warehouse.Collect{}
			})
			var qe *client.QueryError
			if !errors.As(err, &qe) || qe.Status != tt.status || qe.Msg != tt.msg {
				t.Fatalf("error %#v, want a QueryError %d %q", err, tt.status, tt.msg)
			}
			if diff := cmp.Diff([]string{"SELECT * FROM nope"}, runs); diff != "" {
				t.Errorf("statements run (-want +got):\n%s", diff)
			}
		})
	}
}
