package ingest_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

const landing, quarantine = ingesttest.Landing, ingesttest.Quarantine

var testStart = time.Date(2026, 3, 15, 2, 0, 0, 0, time.UTC)

// rig is a Service on real parts (see ingesttest), with a settable clock and
// fault injection points on every port.
type rig struct {
	*ingesttest.Parts
	t      *testing.T
	clock  *ingesttest.Clock
	mu     sync.Mutex
	faults faults
	svc    *ingest.Service

	refreshing, overlaps atomic.Int32
	hangLoad             atomic.Bool   // loads wait for their context to end
	refreshDelay         time.Duration // a refresh takes a while, like a query job
	finishes             []finishCall  // the context state of every ledger Finish
}

type finishCall struct {
	err         error // the context's error when Finish was called
	hasDeadline bool
	left        time.Duration
}

// faults make one call of a port fail, as a crash or outage at that step;
// each is consumed when it fires.
type faults struct {
	openErr, loadBefore, loadAfter, refresh, quarantineClose, finish error
	loadCut                                                          error // every row read, then the load fails uncommitted
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newRigWith(t, nil, logging.Discard())
}

func newRigWith(t *testing.T, edit func(*ingest.Config), log *slog.Logger) *rig {
	t.Helper()
	return newRigOn(t, ingesttest.NewParts(t, landing, quarantine), edit, log)
}

func newRigOn(t *testing.T, p *ingesttest.Parts, edit func(*ingest.Config), log *slog.Logger) *rig {
	t.Helper()
	r := &rig{Parts: p, t: t, clock: ingesttest.NewClock(testStart)}
	cfg := ingest.Config{QuarantineBucket: quarantine, QuarantinePrefix: "cuarentena/", MaxRecordBytes: 4096}
	if edit != nil {
		edit(&cfg)
	}
	var err error
	r.svc, err = ingest.New(faultyObjects{r}, faultyLedger{p.Ledger, r}, faultyWarehouse{r}, p.Feeds, cfg, r.clock.Now, log)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) take(f *error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := *f
	*f = nil
	return err
}

func (r *rig) upload(name, content string) ingest.Object {
	r.t.Helper()
	a := ingesttest.Put(r.t, r.GCS, landing, name, content, nil)
	return ingest.Object{Bucket: landing, Name: name, Generation: a.Generation, MD5: a.MD5, Size: a.Size}
}

// ingestAtOnce delivers every object concurrently.
func (r *rig) ingestAtOnce(objs ...ingest.Object) []error {
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, obj := range objs {
		wg.Go(func() { _, errs[i] = r.svc.Ingest(context.Background(), obj) })
	}
	wg.Wait()
	return errs
}

func (r *rig) ingest(obj ingest.Object) ledger.Record {
	r.t.Helper()
	rec, err := r.svc.Ingest(context.Background(), obj)
	if err != nil {
		r.t.Fatalf("Ingest %s: %v", obj.Name, err)
	}
	return rec
}

func (r *rig) query(sql string) [][]string {
	r.t.Helper()
	return ingesttest.Query(r.t, r.Warehouse, sql)
}

func (r *rig) rows(table string) string {
	r.t.Helper()
	return r.query("SELECT COUNT(*) FROM " + table)[0][0]
}

// quarantineRows returns the rows of quarantine file name, the header first:
// callers index it, so a file without one fails the test.
func (r *rig) quarantineRows(name string) [][]string {
	r.t.Helper()
	rc, err := r.GCS.Open(context.Background(), quarantine, name, 0)
	if err != nil {
		r.t.Fatalf("open quarantine %s: %v", name, err)
	}
	defer rc.Close()
	rows, err := csv.NewReader(rc).ReadAll()
	if err == nil && len(rows) == 0 {
		err = errors.New("empty, want a header")
	}
	if err != nil {
		r.t.Fatalf("read quarantine %s: %v", name, err)
	}
	return rows
}

type faultyObjects struct{ r *rig }

func (f faultyObjects) Open(ctx context.Context, bucket, name string, gen int64) (io.ReadCloser, error) {
	if err := f.r.take(&f.r.faults.openErr); err != nil {
		return nil, err
	}
	return f.r.GCS.Open(ctx, bucket, name, gen)
}

func (f faultyObjects) Create(ctx context.Context, bucket, name, ct string, meta map[string]string) objects.Writer {
	return faultyWriter{Writer: f.r.GCS.Create(ctx, bucket, name, ct, meta), r: f.r}
}

type faultyWriter struct {
	objects.Writer
	r *rig
}

func (w faultyWriter) Close() error {
	if err := w.r.take(&w.r.faults.quarantineClose); err != nil {
		w.Writer.Abort()
		return err
	}
	return w.Writer.Close()
}

type faultyLedger struct {
	*ledger.Ledger
	r *rig
}

func (f faultyLedger) Finish(ctx context.Context, rec ledger.Record, now time.Time) error {
	call := finishCall{err: ctx.Err()}
	if d, ok := ctx.Deadline(); ok {
		call.hasDeadline, call.left = true, time.Until(d)
	}
	f.r.mu.Lock()
	f.r.finishes = append(f.r.finishes, call)
	f.r.mu.Unlock()
	if rec.State.Final() {
		if err := f.r.take(&f.r.faults.finish); err != nil {
			return err
		}
	}
	return f.Ledger.Finish(ctx, rec, now)
}

type faultyWarehouse struct{ r *rig }

func (f faultyWarehouse) Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error) {
	if err := f.r.take(&f.r.faults.loadBefore); err != nil {
		return warehouse.LoadResult{}, err
	}
	if err := f.r.take(&f.r.faults.loadCut); err != nil {
		for req.Rows.Next() {
		}
		return warehouse.LoadResult{}, errors.Join(err, req.Rows.Err())
	}
	if f.r.hangLoad.Load() {
		<-ctx.Done()
		return warehouse.LoadResult{}, fmt.Errorf("load job: %w", ctx.Err())
	}
	res, err := f.r.Warehouse.Load(ctx, req)
	if err != nil {
		return res, err
	}
	// A crash right after the commit: the rows are in, the caller never hears.
	if err := f.r.take(&f.r.faults.loadAfter); err != nil {
		return warehouse.LoadResult{}, err
	}
	return res, nil
}

func (f faultyWarehouse) RefreshDaily(ctx context.Context, agg string, dates []int32) error {
	if err := f.r.take(&f.r.faults.refresh); err != nil {
		return err
	}
	if f.r.refreshing.Add(1) > 1 {
		f.r.overlaps.Add(1)
	}
	defer f.r.refreshing.Add(-1)
	time.Sleep(f.r.refreshDelay)
	return f.r.Warehouse.RefreshDaily(ctx, agg, dates)
}

func readSeed(t *testing.T, name string) string {
	t.Helper()
	return string(readFile(t, filepath.Join("..", "..", "testdata", filepath.FromSlash(name))))
}

const seedOrders = "exportaciones/2026/03/14/pedidos-erp.csv"

// TestDeliveriesLoadOnce: concurrent deliveries, redeliveries and a copy
// under another name load the file once.
func TestDeliveriesLoadOnce(t *testing.T) {
	r := newRig(t)
	content := readSeed(t, seedOrders)
	obj := r.upload(seedOrders, content)
	for i, err := range r.ingestAtOnce(slices.Repeat([]ingest.Object{obj}, 8)...) {
		if err != nil && !errors.Is(err, ingest.ErrBusy) {
			t.Errorf("delivery %d: %v (want nil or ErrBusy)", i, err)
		}
	}
	// The platform redelivers the busy ones; they find the work done.
	first, again := r.ingest(obj), r.ingest(obj)
	dup := r.ingest(r.upload("exportaciones/2026/03/14/copia.csv", content))
	key := obj.Key()
	got := []any{first.State, again.State, again.Attempt - first.Attempt, dup.State, dup.DuplicateOf,
		r.rows("lineas_pedido")}
	want := []any{ledger.Done, ledger.Done, 0, ledger.Duplicate, &key, "1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("redeliveries, new attempts, the copy and what it duplicates, rows loaded "+
			"(-want +got):\n%s", diff)
	}
}

// TestCrashAtEachStep fails one step, redelivers once the lease expired, and
// checks the end state is one clean run's (the first case): every row loaded
// once or quarantined, and the ledger holding the counts returned.
func TestCrashAtEachStep(t *testing.T) {
	tests := []struct {
		name   string
		inject func(*faults)
	}{
		{"no fault", nil},
		{"object read fails", func(f *faults) { f.openErr = errors.New("storage unavailable") }},
		{"load fails before commit", func(f *faults) { f.loadBefore = errors.New("warehouse unavailable") }},
		{"crash after load commit", func(f *faults) { f.loadAfter = errors.New("instance killed after commit") }},
		{"quarantine write fails", func(f *faults) { f.quarantineClose = errors.New("quarantine bucket unavailable") }},
		{"daily aggregate fails", func(f *faults) { f.refresh = errors.New("aggregate query failed") }},
		{"ledger finish fails", func(f *faults) { f.finish = errors.New("state store unavailable") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ctx := context.Background()
			obj := r.upload(seedOrders, readSeed(t, seedOrders))
			if tt.inject != nil {
				tt.inject(&r.faults)
				if _, err := r.svc.Ingest(ctx, obj); err == nil {
					t.Fatal("first attempt succeeded despite the fault")
				}
				r.clock.Advance(11 * time.Minute) // a crashed attempt's lease expires
			}
			rec := r.ingest(obj)
			q := r.quarantineRows(rec.Quarantine)
			stored, _, err := r.Ledger.Get(ctx, obj.Key())
			if err != nil {
				t.Fatal(err)
			}
			got := []any{rec.State, countsOf(rec), len(rec.Counts.Rejects), stored.Counts,
				r.rows("lineas_pedido"), r.query("SELECT SUM(lineas) FROM ventas_diarias_sku")[0][0],
				q[0], len(q) - 1}
			want := []any{ledger.Done, counts{4, 1, 3}, 3, rec.Counts, "1", "1",
				ingest.QuarantineHeader, 3}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("state, counts, reject codes, counts stored, rows loaded (exactly once), "+
					"lines aggregated, quarantine header, rows quarantined (-want +got):\n%s", diff)
			}
			says := func(row []string) bool { return strings.Contains(row[2], "expected 8 columns, got 9") }
			if !slices.ContainsFunc(q[1:], says) {
				t.Errorf("no quarantine row says `expected 8 columns, got 9`: %v", q)
			}
		})
	}
}

func TestFileLevelOutcomes(t *testing.T) {
	const header = "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\n"
	tests := []struct {
		name      string
		object    string
		content   string
		state     ledger.State
		reason    string
		read      int64
		quarantin int64
		gone      bool
	}{
		{name: "empty file", object: "exportaciones/2026/03/14/vacio.csv", content: "", state: ledger.Rejected, reason: "empty object: no header row"},
		{name: "header only", object: "exportaciones/2026/03/14/cabecera.csv", content: header, state: ledger.Done},
		{name: "binary file", object: "exportaciones/2026/03/14/binario.csv", content: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", state: ledger.Rejected, reason: "binary content: NUL byte in the first 8000 bytes"},
		{name: "missing required column quarantines every row", object: "exportaciones/2026/03/14/sin-cantidad.csv",
			content: "pedido_id,linea,fecha,sku,precio_unitario,cliente_id,pais\r\nP-1,1,2026-03-14,MOCH-40L-AZ,\"89,90\",C-1,ES\r\nP-2,1,2026-03-14,MOCH-40L-AZ,\"89,90\",C-1,ES\r\n",
			state:   ledger.Rejected, reason: "missing required column cantidad", read: 2, quarantin: 2},
		{name: "no contract", object: "otros/inventario.csv", content: header, state: ledger.Skipped, reason: "no contract matches this object name"},
		// A permanent outcome, not an error to retry on.
		{name: "generation gone", object: seedOrders, content: header, gone: true,
			state: ledger.Rejected, reason: "object generation no longer exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			obj := r.upload(tt.object, tt.content)
			if tt.gone {
				obj.Generation += 1000 // an event about a generation that no longer exists
			}
			rec := r.ingest(obj)
			got := []any{rec.State, rec.Reason, rec.Counts.Read, rec.Counts.Quarantined}
			want := []any{tt.state, tt.reason, tt.read, tt.quarantin}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("state, reason, read, quarantined (-want +got):\n%s", diff)
			}
			if rec.Counts.Read != rec.Counts.Loaded+rec.Counts.Quarantined {
				t.Errorf("read %d != loaded %d + quarantined %d", rec.Counts.Read, rec.Counts.Loaded, rec.Counts.Quarantined)
			}
		})
	}
}

func TestBusyWhileAnotherAttemptHoldsTheLease(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	obj := r.upload(seedOrders, readSeed(t, seedOrders))
	if _, err := r.Ledger.Claim(ctx, obj.Key(), obj.MD5, "other-instance", r.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.svc.Ingest(ctx, obj); !errors.Is(err, ingest.ErrBusy) {
		t.Fatalf("Ingest while leased = %v, want ErrBusy", err)
	}
	r.clock.Advance(11 * time.Minute)
	rec, err := r.svc.Ingest(ctx, obj)
	if err != nil || rec.State != ledger.Done || rec.Attempt != 2 {
		t.Fatalf("take-over = %s attempt %d, %v; want DONE attempt 2", rec.State, rec.Attempt, err)
	}
}

// TestRefreshesNeverOverlap: the refreshes of files of one date ingested at
// once run one after the other, and the aggregate holds every file's rows.
func TestRefreshesNeverOverlap(t *testing.T) {
	r := newRig(t)
	r.refreshDelay = 20 * time.Millisecond
	objs := make([]ingest.Object, 6)
	for i := range objs {
		objs[i] = r.upload(fmt.Sprintf("exportaciones/2026/03/14/parte-%d.csv", i),
			fmt.Sprintf("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\r\nP-%d,1,2026-03-14,MOCH-40L-AZ,%d,\"89,90\",C-1,ES\r\n", i, i+1))
	}
	for i, err := range r.ingestAtOnce(objs...) {
		if err != nil {
			t.Errorf("file %d: %v", i, err)
		}
	}
	if n := r.overlaps.Load(); n != 0 {
		t.Errorf("%d refreshes overlapped another", n)
	}
	if got := r.query("SELECT unidades, lineas FROM ventas_diarias_sku"); len(got) != 1 || got[0][0] != "21" || got[0][1] != "6" {
		t.Errorf("ventas_diarias_sku = %v, want [[21 6]] (1+2+...+6 units over 6 lines)", got)
	}
}

// TestPermanentWarehouseFailureIsNotRetried: a load refused for good is
// acknowledged and recorded FAILED; a later run after the fix takes over.
func TestPermanentWarehouseFailureIsNotRetried(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	obj := r.upload(seedOrders, readSeed(t, seedOrders))
	r.faults.loadBefore = &warehouse.PermanentError{Err: errors.New("job x failed: invalid: no such field")}
	rec, err := r.svc.Ingest(ctx, obj)
	if err != nil {
		t.Fatalf("Ingest = %v, want nil: a retry cannot help", err)
	}
	if rec.State != ledger.Failed || !strings.HasPrefix(rec.Reason, "permanent") {
		t.Fatalf("record = %s %q, want FAILED permanent", rec.State, rec.Reason)
	}
	again, err := r.svc.Ingest(ctx, obj)
	if err != nil || again.State != ledger.Done || again.Attempt != 2 {
		t.Fatalf("after the fix: %s attempt %d, %v; want DONE attempt 2", again.State, again.Attempt, err)
	}
}
