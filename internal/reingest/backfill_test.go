package reingest_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/reingest"
)

// interruptAfter cancels the backfill when its n-th object finishes, as a
// person pressing Ctrl-C would: the objects still in flight are cut short.
type interruptAfter struct {
	inner  reingest.Ingester
	n      int64
	done   atomic.Int64
	cancel context.CancelFunc
}

func (i *interruptAfter) Ingest(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
	rec, err := i.inner.Ingest(ctx, a)
	if i.done.Add(1) == i.n {
		i.cancel()
	}
	return rec, err
}

// TestBackfillResumesAfterInterrupt interrupts a backfill midway with no
// grace, so the objects in flight are cancelled wherever they are, then
// runs it again after the cut attempts' leases expire: every row is loaded
// exactly once, and a third run only skips.
func TestBackfillResumesAfterInterrupt(t *testing.T) {
	r := newRig(t)
	const files, rowsPerFile = 12, 40
	want := map[string]string{}
	var wantLoaded int
	for d := 1; d <= files; d++ {
		name := fmt.Sprintf("exportaciones/2026/02/%02d/pedidos.csv", d)
		content, loaded, _ := orderFile(d, "BF", rowsPerFile)
		r.put(landing, name, content, nil)
		want["gs://"+landing+"/"+name] = strconv.Itoa(loaded)
		wantLoaded += loaded
	}
	other, _, _ := orderFile(28, "OUT", 5)
	r.put(landing, "exportaciones/2026/03/01/fuera.csv", other, nil) // outside the prefix

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopper := &interruptAfter{inner: reingest.Direct{Service: r.svc, BusyWait: time.Millisecond}, n: 4, cancel: cancel}
	first, err := (&reingest.Backfill{Objects: r.gcs, Ledger: r.led, Ingest: stopper, Concurrency: 3}).Run(ctx, landing, "exportaciones/2026/02/")
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || first.Loaded >= files {
		t.Fatalf("first run: interrupted %v after loading %d of %d files; want an interruption midway", first.Interrupted, first.Loaded, files)
	}
	finished := countFinal(t, r)
	t.Logf("first run: %d loaded, %d cut short, %d final in the ledger", first.Loaded, len(first.Failed), finished)

	// An attempt cancelled between its load and its ledger record keeps
	// its lease; the next run takes over once it expires.
	r.advance(11 * time.Minute)
	second, err := (&reingest.Backfill{Objects: r.gcs, Ledger: r.led, Ingest: reingest.Direct{Service: r.svc}, Concurrency: 3}).Run(context.Background(), landing, "exportaciones/2026/02/")
	if err != nil {
		t.Fatal(err)
	}
	if second.Interrupted || len(second.Failed) > 0 {
		t.Fatalf("second run: interrupted %v, failed %v", second.Interrupted, second.Failed)
	}
	if second.Skipped != int64(finished) || second.Skipped+second.Loaded != files {
		t.Errorf("second run: skipped %d, loaded %d; want %d skipped and the other %d loaded", second.Skipped, second.Loaded, finished, files-finished)
	}

	got := map[string]string{}
	for _, row := range r.query("SELECT source_object, COUNT(*) FROM lineas_pedido GROUP BY source_object") {
		got[row[0]] = row[1]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows per file (-want +got):\n%s", diff)
	}
	if n := r.query("SELECT COUNT(*), COUNT(DISTINCT pedido_id) FROM lineas_pedido")[0]; n[0] != strconv.Itoa(wantLoaded) || n[1] != n[0] {
		t.Errorf("rows, distinct orders = %v; want %d of each", n, wantLoaded)
	}
	for _, rec := range listLedger(t, r) {
		if rec.State != ledger.Done || rec.Counts.Read != rowsPerFile || rec.Counts.Read != rec.Counts.Loaded+rec.Counts.Quarantined {
			t.Errorf("%s: %s %+v", rec.Key, rec.State, rec.Counts)
		}
	}

	third, err := (&reingest.Backfill{Objects: r.gcs, Ledger: r.led, Ingest: reingest.Direct{Service: r.svc}}).Run(context.Background(), landing, "exportaciones/2026/02/")
	if err != nil {
		t.Fatal(err)
	}
	if third.Skipped != files || third.Loaded != 0 || third.RowsRead != 0 {
		t.Errorf("third run: %+v; want all %d skipped", third, files)
	}
}

func countFinal(t *testing.T, r *rig) int {
	n := 0
	for _, rec := range listLedger(t, r) {
		if rec.State.Final() {
			n++
		}
	}
	return n
}

func listLedger(t *testing.T, r *rig) []ledger.Record {
	t.Helper()
	recs, err := r.led.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// failOn makes one object's ingestion fail, as an outage would.
type failOn struct {
	inner reingest.Ingester
	name  string
}

func (f failOn) Ingest(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
	if a.Name == f.name {
		return ledger.Record{}, errors.New("load into lineas_pedido: warehouse unavailable")
	}
	return f.inner.Ingest(ctx, a)
}

// TestBackfillSummary covers every outcome an object can have.
func TestBackfillSummary(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	clean, cleanLoaded, _ := orderFile(1, "A", 10)
	dirty, dirtyLoaded, _ := orderFile(2, "B", 20) // rows 10 and 20 negative, 17 in country XX
	before, _, _ := orderFile(3, "C", 5)
	a := r.put(landing, "exportaciones/2026/03/01/a.csv", clean, nil)
	r.put(landing, "exportaciones/2026/03/02/b.csv", dirty, nil)
	c := r.put(landing, "exportaciones/2026/03/02/c.csv", clean, nil) // a's content again
	pre := r.put(landing, "exportaciones/2026/03/03/antes.csv", before, nil)
	empty := r.put(landing, "exportaciones/2026/03/04/vacio.csv", "", nil)
	r.put(landing, "exportaciones/2026/03/05/", "", nil) // a console's folder placeholder
	r.put(landing, "exportaciones/2026/03/05/caido.csv", clean+"PED-X,1,2026-03-05,S,1,1,C,ES\n", nil)
	r.put(landing, "exportaciones/2026/03/notas.txt", "hello", nil)
	if _, err := r.svc.Ingest(ctx, ingest.Object{Bucket: landing, Name: pre.Name, Generation: pre.Generation, MD5: pre.MD5}); err != nil {
		t.Fatal(err)
	}

	var progress []reingest.Progress
	b := &reingest.Backfill{
		Objects: r.gcs, Ledger: r.led, Concurrency: 1,
		Ingest:   failOn{reingest.Direct{Service: r.svc}, "exportaciones/2026/03/05/caido.csv"},
		Progress: func(p reingest.Progress) { progress = append(progress, p) },
	}
	got, err := b.Run(ctx, landing, "exportaciones/2026/03/")
	if err != nil {
		t.Fatal(err)
	}
	got.Seconds = 0
	key := func(a objects.Attrs) string {
		return ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}.String()
	}
	caido, err := r.gcs.Stat(ctx, landing, "exportaciones/2026/03/05/caido.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := reingest.Summary{
		Prefix:          "gs://" + landing + "/exportaciones/2026/03/",
		Listed:          7,
		Loaded:          2,
		RowsRead:        30,
		RowsLoaded:      int64(cleanLoaded + dirtyLoaded),
		RowsQuarantined: 4,
		Rejects:         map[string]int64{"cantidad:below_min": 3, "pais:not_iso3166": 1},
		Skipped:         1,
		NoContract:      1,
		Duplicates:      []reingest.FileNote{{Object: key(c), Reason: fmt.Sprintf("same content (MD5 %s) as %s", a.MD5, key(a))}},
		Rejected:        []reingest.FileNote{{Object: key(empty), Reason: "empty object: no header row"}},
		Failed:          []reingest.FileNote{{Object: key(caido), Reason: "load into lineas_pedido: warehouse unavailable"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if n := len(progress); n == 0 || progress[n-1].Done != 7 || progress[n-1].Total != 7 {
		t.Errorf("last progress %+v; want 7 of 7 done", progress[len(progress)-1])
	}
}
