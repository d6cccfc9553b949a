package client_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/status"
)

// One local server, on a virtual clock, serves every test of this package;
// TestMain stops it and removes its data folder.
var srv *local.Server

func TestMain(m *testing.M) {
	data, err := os.MkdirTemp("", "alpipe-client-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	clock := local.VirtualClock(time.Date(2026, 3, 15, 8, 0, 0, 0, time.UTC))
	srv, err = local.Start(context.Background(), local.Options{Addr: "127.0.0.1:0", DataDir: data, Clock: clock, Logger: logging.Discard()})
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

func query(t *testing.T, sql string) [][]string {
	t.Helper()
	res, err := (client.Server{URL: srv.URL}).Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rows
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

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var lines strings.Builder
	printer := reingest.NewProgressPrinter(&lines, false)
	first, err := (&reingest.Backfill{Objects: gcs, Ledger: server, Ingest: &stopAfter{Ingester: server, n: 2, cancel: cancel},
		Concurrency: 2, Grace: 30 * time.Second, Progress: printer.Update}).Run(ctx, localapi.LandingBucket, "exportaciones/2025/01/")
	if err != nil {
		t.Fatal(err)
	}
	// With a grace period the objects in flight finish: none is cut short.
	if !first.Interrupted || first.Loaded < 2 || first.Loaded == files || len(first.Failed) > 0 {
		t.Fatalf("first run: %+v; want an interruption after 2 of %d files, nothing failed", first, files)
	}
	if n := strings.Count(lines.String(), "\n"); int64(n) != first.Loaded {
		t.Errorf("%d progress lines for %d files:\n%s", n, first.Loaded, lines.String())
	}

	second, err := (&reingest.Backfill{Objects: gcs, Ledger: server, Ingest: server, Concurrency: 2}).Run(context.Background(), localapi.LandingBucket, "exportaciones/2025/01/")
	if err != nil {
		t.Fatal(err)
	}
	if second.Interrupted || len(second.Failed) > 0 || second.Skipped != first.Loaded || second.Loaded != files-first.Loaded {
		t.Errorf("second run: %+v; want the %d files the first left, after skipping %d", second, files-first.Loaded, first.Loaded)
	}
	third, err := (&reingest.Backfill{Objects: gcs, Ledger: server, Ingest: server}).Run(context.Background(), localapi.LandingBucket, "exportaciones/2025/01/")
	if err != nil {
		t.Fatal(err)
	}
	if third.Skipped != files || third.Loaded != 0 {
		t.Errorf("third run: %+v; want all %d skipped", third, files)
	}

	got := map[string]string{}
	for _, row := range query(t, "SELECT source_object, COUNT(*) FROM lineas_pedido WHERE source_object LIKE 'gs://"+localapi.LandingBucket+"/exportaciones/2025/01/%' GROUP BY 1") {
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
	rec, err := server.Drop(ctx, "exportaciones/2026/03/14/pedidos-erp.csv", "../../testdata/exportaciones/2026/03/14/pedidos-erp.csv")
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
	res, err := rq.Run(ctx, reingest.RequeueRequest{Bucket: localapi.QuarantineBucket, Name: rec.Quarantine, Rows: &fixed})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	reingest.WriteRequeue(&out, res, localapi.QuarantineBucket)
	for _, must := range []string{
		"status: DONE  rows read/loaded/quarantined: 3/1/2",
		"still wrong: cantidad:below_min 1",
		"still wrong: column_count 1",
		"back in quarantine: gs://" + localapi.QuarantineBucket + "/cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.requeue-",
	} {
		if !strings.Contains(out.String(), must) {
			t.Errorf("requeue output lacks %q:\n%s", must, out.String())
		}
	}
	got := query(t, "SELECT COUNT(*), MIN(fecha) FROM lineas_pedido WHERE pedido_id = 'PED-2026-0314-0004'")
	if diff := cmp.Diff([][]string{{"1", "2026-02-28"}}, got); diff != "" {
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
	rep, err := server.Status(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 || rep.Files == nil || rep.Discarded == nil || !slices.ContainsFunc(rep.Stream, func(a status.StreamReport) bool { return a.Aggregation == "ventas_hora_pais" }) {
		t.Fatalf("report: %+v", rep)
	}
	key := ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}.String()
	var line *status.FileLine
	for i := range rep.Files.Recent {
		if rep.Files.Recent[i].Object == key {
			line = &rep.Files.Recent[i]
		}
	}
	if line == nil || line.State != ledger.Done || line.Read != 12 || line.Loaded != 11 || line.Rejects["cantidad:below_min"] != 1 {
		t.Errorf("report of %s: %+v", key, line)
	}

	resp, err := http.Get(srv.URL + localapi.StatusPath + "?format=text")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(text), "Stream ventas_hora_pais:") || !strings.Contains(string(text), key) {
		t.Errorf("text report:\n%s", text)
	}

	old := httptest.NewServer(http.NotFoundHandler())
	defer old.Close()
	if _, err := (client.Server{URL: old.URL}).Status(ctx, 0, 0); err == nil || !strings.Contains(err.Error(), "no "+localapi.StatusPath+" endpoint") {
		t.Errorf("server without the endpoint: %v", err)
	}
}
