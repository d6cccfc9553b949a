package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
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
	"github.com/alpinashop/alpipe/internal/reingest"
)

const landing, quarantine = ingesttest.Landing, ingesttest.Quarantine

// orders is a lineas_pedido export with n valid rows, distinct per tag.
func orders(tag string, n int) string {
	var b strings.Builder
	b.WriteString("pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\n")
	for i := range n {
		fmt.Fprintf(&b, "%s-%d,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",C-1,ES\n", tag, i)
	}
	return b.String()
}

// rig is the ingest service and a sweeper on real parts: the fake GCS, the
// bolt ledger and DuckDB. Its clock starts when the test says, because the
// fake GCS stamps objects with the wall clock.
type rig struct {
	t     *testing.T
	parts *ingesttest.Parts
	clock *ingesttest.Clock
	svc   *ingest.Service
	logs  *bytes.Buffer // one handler serialises the sweeper's writes
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return &rig{t: t, parts: ingesttest.NewParts(t, landing, quarantine), logs: &bytes.Buffer{}}
}

func (r *rig) put(name, content string) objects.Attrs {
	r.t.Helper()
	return ingesttest.Put(r.t, r.parts.GCS, landing, name, content, nil)
}

// start sets the clock and builds the ingest service on it.
func (r *rig) start(at time.Time) {
	r.t.Helper()
	r.clock = ingesttest.NewClock(at)
	svc, err := ingest.New(r.parts.GCS, r.parts.Ledger, r.parts.Warehouse, r.parts.Feeds, ingest.Config{
		QuarantineBucket: quarantine, QuarantinePrefix: "cuarentena/",
		LandingBucket: landing, LandingPrefixes: []string{"exportaciones/"},
	}, r.clock.Now, logging.Discard())
	if err != nil {
		r.t.Fatal(err)
	}
	r.svc = svc
}

func (r *rig) sweeper(ing Ingester, edit func(*Options)) *Sweeper {
	r.t.Helper()
	if ing == nil {
		ing = reingest.Direct{Service: r.svc, BusyWait: time.Millisecond}
	}
	opts := Options{Bucket: landing, Prefixes: []string{"exportaciones/"}, Now: r.clock.Now, Log: logging.New(r.logs, slog.LevelInfo)}
	if edit != nil {
		edit(&opts)
	}
	s, err := New(r.parts.GCS, r.parts.Ledger, ing, opts)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// counts are a Summary's figures and the rows loaded after the run.
type counts struct {
	Found, Ingested, Failed, Skipped int
	Rows                             string
}

// run runs s and wants its figures and the rows loaded after it.
func (r *rig) run(s *Sweeper, what string, want counts) Summary {
	r.t.Helper()
	sum, err := s.Run(context.Background())
	if err != nil {
		r.t.Fatalf("Run: %v", err)
	}
	got := counts{Found: sum.Found, Ingested: sum.Ingested, Failed: sum.Failed, Skipped: sum.Skipped,
		Rows: ingesttest.Query(r.t, r.parts.Warehouse, "SELECT COUNT(*) FROM lineas_pedido")[0][0]}
	if diff := cmp.Diff(want, got); diff != "" {
		r.t.Errorf("%s (-want +got):\n%s", what, diff)
	}
	return sum
}

func key(a objects.Attrs) string {
	return ledger.Key{Bucket: a.Bucket, Object: a.Name, Generation: a.Generation}.String()
}

// TestFileWithoutEventLoadedOnceAfterGrace: a file whose event never came is
// left alone during the grace period, then loaded exactly once; a file its
// event loaded is never touched; a further run finds nothing.
func TestFileWithoutEventLoadedOnceAfterGrace(t *testing.T) {
	r := newRig(t)
	lost := r.put("exportaciones/2026/03/14/perdido.csv", orders("LOST", 3))
	delivered := r.put("exportaciones/2026/03/14/entregado.csv", orders("OK", 2))
	r.start(lost.Created.Add(10 * time.Minute))
	if _, err := r.svc.Ingest(context.Background(), ingest.Object{Bucket: landing, Name: delivered.Name, Generation: delivered.Generation, MD5: delivered.MD5, Size: delivered.Size}); err != nil {
		t.Fatal(err)
	}
	s := r.sweeper(nil, nil)

	// Only the delivered file's 2 rows while the lost one is in its grace.
	r.run(s, "within the grace period", counts{Rows: "2"})

	r.clock.Advance(21 * time.Minute) // 31 min after the drop
	sum := r.run(s, "after the grace period", counts{Found: 1, Ingested: 1, Rows: "5"})
	want := []FoundObject{{Object: key(lost), Created: lost.Created, Found: "no ledger record: no event reached the ingest", Outcome: Ingested, State: ledger.Done}}
	if diff := cmp.Diff(want, sum.Objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	r.clock.Advance(15 * time.Minute)
	r.run(s, "second run: nothing found, loaded once", counts{Rows: "5"})

	lines := finishedLines(t, r.logs.String())
	wantLines := []map[string]any{
		{"found": 0.0, "ingested": 0.0, "failed": 0.0, "skipped": 0.0},
		{"found": 1.0, "ingested": 1.0, "failed": 0.0, "skipped": 0.0},
		{"found": 0.0, "ingested": 0.0, "failed": 0.0, "skipped": 0.0},
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf(`"sweep finished" lines (-want +got):`+"\n%s", diff)
	}
}

// finishedLines returns the counts of every "sweep finished" line, as JSON
// numbers (a log-based metric extracts them as such).
func finishedLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["message"] != "sweep finished" {
			continue
		}
		out = append(out, map[string]any{"found": m["found"], "ingested": m["ingested"], "failed": m["failed"], "skipped": m["skipped"]})
	}
	return out
}

// TestLiveClaimLeftAlone: an attempt holding the claim (Eventarc's
// redelivery at work) is not raced; once its lease expires unfinished, the
// sweep takes over.
func TestLiveClaimLeftAlone(t *testing.T) {
	r := newRig(t)
	a := r.put("exportaciones/2026/03/14/lento.csv", orders("SLOW", 2))
	r.start(a.Created.Add(time.Hour))
	k := ledger.Key{Bucket: landing, Object: a.Name, Generation: a.Generation}
	if _, err := r.parts.Ledger.Claim(context.Background(), k, a.MD5, "another-attempt", r.clock.Now()); err != nil {
		t.Fatal(err)
	}
	s := r.sweeper(nil, nil)
	r.run(s, "while claimed", counts{Found: 1, Skipped: 1, Rows: "0"})
	r.clock.Advance(11 * time.Minute) // the ledger's lease is 10 min
	r.run(s, "after the lease expired", counts{Found: 1, Ingested: 1, Rows: "2"})
}

// inFlight counts concurrent ingests and can fail chosen objects.
type inFlight struct {
	inner     Ingester
	now, peak atomic.Int32
	fail      map[string]error
}

func (f *inFlight) Ingest(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
	n := f.now.Add(1)
	defer f.now.Add(-1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	time.Sleep(20 * time.Millisecond)
	if err := f.fail[a.Name]; err != nil {
		return ledger.Record{}, err
	}
	return f.inner.Ingest(ctx, a)
}

// TestLimitConcurrencyAndFailures: a run ingests at most MaxObjects, at most
// Concurrency at once; a failed ingest is retried by the next run.
func TestLimitConcurrencyAndFailures(t *testing.T) {
	r := newRig(t)
	var names []string
	var first objects.Attrs
	for i := range 5 {
		a := r.put(fmt.Sprintf("exportaciones/2026/03/%02d/pedidos.csv", i+1), orders(fmt.Sprintf("F%d", i), 1))
		if i == 0 {
			first = a
		}
		names = append(names, a.Name)
	}
	r.start(first.Created.Add(time.Hour))
	ing := &inFlight{inner: reingest.Direct{Service: r.svc, BusyWait: time.Millisecond}, fail: map[string]error{names[0]: errors.New("ingest service unreachable")}}
	s := r.sweeper(ing, func(o *Options) { o.MaxObjects, o.Concurrency = 3, 2 })

	sum := r.run(s, "first run", counts{Found: 5, Ingested: 2, Failed: 1, Skipped: 2, Rows: "2"})
	if p := ing.peak.Load(); p > 2 {
		t.Errorf("%d ingests at once, want at most 2", p)
	}
	var outcomes []string
	for _, o := range sum.Objects {
		outcomes = append(outcomes, o.Outcome)
	}
	if diff := cmp.Diff([]string{"failed", "ingested", "ingested", "skipped", "skipped"}, outcomes); diff != "" {
		t.Errorf("outcomes in listing order (-want +got):\n%s", diff)
	}

	delete(ing.fail, names[0])
	r.clock.Advance(15 * time.Minute)
	r.run(s, "second run", counts{Found: 3, Ingested: 3, Rows: "5"})
	r.run(s, "third run", counts{Rows: "5"})
}

// blocking holds every ingest until released.
type blocking struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blocking) Ingest(ctx context.Context, a objects.Attrs) (ledger.Record, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return ledger.Record{State: ledger.Done}, nil
}

// TestOverlappingRunsExcludeEachOther: a scheduler call arriving while a
// run is still at work does nothing and says so.
func TestOverlappingRunsExcludeEachOther(t *testing.T) {
	r := newRig(t)
	a := r.put("exportaciones/2026/03/14/p.csv", orders("B", 1))
	r.start(a.Created.Add(time.Hour))
	b := &blocking{entered: make(chan struct{}), release: make(chan struct{})}
	s := r.sweeper(b, nil)
	done := make(chan error, 1)
	go func() { _, err := s.Run(context.Background()); done <- err }()
	<-b.entered
	sum, err := s.Run(context.Background())
	if !errors.Is(err, ErrBusy) || !sum.Busy {
		t.Errorf("overlapping run = %+v, %v; want Busy, ErrBusy", sum, err)
	}
	close(b.release)
	if err := <-done; err != nil {
		t.Fatalf("first run: %v", err)
	}
	if _, err := s.Run(context.Background()); err != nil {
		t.Errorf("run after the first finished: %v, want the lock released", err)
	}
}

// failingLister fails after handing out its objects.
type failingLister struct{ objs []objects.Attrs }

func (f failingLister) List(context.Context, string, string) iter.Seq2[objects.Attrs, error] {
	return func(yield func(objects.Attrs, error) bool) {
		for _, a := range f.objs {
			if !yield(a, nil) {
				return
			}
		}
		yield(objects.Attrs{}, errors.New("storage: 503 backend error"))
	}
}

// TestListingFailureIsTransient: a failed listing is an error (the function
// answers 500) and nothing is ingested on a partial view.
func TestListingFailureIsTransient(t *testing.T) {
	r := newRig(t)
	a := r.put("exportaciones/2026/03/14/p.csv", orders("L", 1))
	r.start(a.Created.Add(time.Hour))
	ing := &inFlight{inner: reingest.Direct{Service: r.svc}}
	s, err := New(failingLister{[]objects.Attrs{a}}, r.parts.Ledger, ing, Options{Bucket: landing, Now: r.clock.Now, Log: logging.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("Run error = %v, want the listing's", err)
	}
	if ing.peak.Load() != 0 {
		t.Error("ingested on a failed listing")
	}
	if _, err := s.Run(context.Background()); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("second Run error = %v, want the listing's again (lock released)", err)
	}
}

func TestNewRefusesIncompleteSetup(t *testing.T) {
	p := ingesttest.NewParts(t, landing)
	ing := reingest.Direct{}
	log := logging.Discard()
	tests := []struct {
		name   string
		lister Lister
		led    Ledger
		ing    Ingester
		opts   Options
		want   string
	}{
		{name: "complete", lister: p.GCS, led: p.Ledger, ing: ing, opts: Options{Bucket: landing, Log: log}},
		{name: "no dependencies", opts: Options{Bucket: landing}, want: "sweep: missing dependencies: lister, ledger, ingester, logger"},
		{name: "no bucket", lister: p.GCS, led: p.Ledger, ing: ing, opts: Options{Log: log}, want: "sweep: no landing bucket"},
		{name: "grace not shorter than the window", lister: p.GCS, led: p.Ledger, ing: ing, opts: Options{Bucket: landing, Log: log, Window: time.Hour, Grace: time.Hour},
			want: "sweep: grace 1h0m0s must be shorter than the window 1h0m0s"},
		{name: "negative", lister: p.GCS, led: p.Ledger, ing: ing, opts: Options{Bucket: landing, Log: log, Concurrency: -1},
			want: "sweep: negative setting (window 0s, grace 0s, max objects 0, concurrency -1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.lister, tt.led, tt.ing, tt.opts)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("New error = %q, want %q", got, tt.want)
			}
		})
	}
}

var now = time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)

func TestExamined(t *testing.T) {
	o := Options{Window: 72 * time.Hour, Grace: 30 * time.Minute}
	obj := func(name string, size int64, age time.Duration) objects.Attrs {
		return objects.Attrs{Name: name, Size: size, Created: now.Add(-age)}
	}
	const p = "exportaciones/p.csv"
	tests := []struct {
		name string
		a    objects.Attrs
		want bool
	}{
		{"inside the window", obj(p, 10, 2*time.Hour), true},
		{"exactly the grace period old", obj(p, 10, 30*time.Minute), true},
		{"exactly the window old", obj(p, 10, 72*time.Hour), true},
		{"younger than the grace period: Eventarc's", obj(p, 10, 29*time.Minute), false},
		{"created in our future", obj(p, 10, -time.Hour), false},
		{"older than the window", obj(p, 10, 73*time.Hour), false},
		{"folder placeholder", obj("exportaciones/2026/", 0, 2*time.Hour), false},
		{"empty file is examined", obj("exportaciones/vacio.csv", 0, 2*time.Hour), true},
		{"no creation time", objects.Attrs{Name: p, Size: 10}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := o.examined(tt.a, now); got != tt.want {
				t.Errorf("examined = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	claim := func(left time.Duration) ledger.Record {
		return ledger.Record{State: ledger.InProgress, LeaseUntil: now.Add(left)}
	}
	type result struct {
		Verdict Verdict
		Why     string
	}
	tests := []struct {
		name string
		rec  ledger.Record
		ok   bool
		want result
	}{
		{"no record", ledger.Record{}, false, result{Sweep, "no ledger record: no event reached the ingest"}},
		{"done", ledger.Record{State: ledger.Done}, true, result{Ignore, ""}},
		{"rejected", ledger.Record{State: ledger.Rejected}, true, result{Ignore, ""}},
		{"duplicate", ledger.Record{State: ledger.Duplicate}, true, result{Ignore, ""}},
		{"skipped: no contract", ledger.Record{State: ledger.Skipped}, true, result{Ignore, ""}},
		{"failed", ledger.Record{State: ledger.Failed, Reason: "load: warehouse unavailable"}, true,
			result{Sweep, "last attempt FAILED: load: warehouse unavailable"}},
		{"live claim", claim(time.Minute), true, result{Leave, "an attempt holds it until 2026-03-15T12:01:00Z"}},
		{"expired claim", claim(-time.Second), true, result{Sweep, "an attempt's lease expired unfinished"}},
		{"claim expiring now", claim(0), true, result{Sweep, "an attempt's lease expired unfinished"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, why := verdict(tt.rec, tt.ok, now)
			if diff := cmp.Diff(tt.want, result{v, why}); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDedupePrefixes(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"none is the whole bucket", nil, []string{""}},
		{"disjoint kept", []string{"exportaciones/", "erp/"}, []string{"exportaciones/", "erp/"}},
		{"covered dropped", []string{"exportaciones/2026/", "exportaciones/"}, []string{"exportaciones/"}},
		{"repeated once", []string{"exportaciones/", "exportaciones/"}, []string{"exportaciones/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, dedupe(tt.in)); diff != "" {
				t.Errorf("dedupe (-want +got):\n%s", diff)
			}
		})
	}
}
