// Package streamtest is the conformance suite of the stream processor over
// a document store: run on every docstore adapter, it proves that the
// processor keeps docs/event-time.md on that store, comparing what reaches a
// recording Sink with the windowtest models.
package streamtest

import (
	"cmp"
	"encoding/json"
	"iter"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// Features sizes the suite for a store: a slow store (an emulator) runs
// fewer random streams. Zero fields take the defaults shown.
type Features struct {
	Streams         int           // random streams per accumulation mode and late delay: 10
	Events          int           // per random stream: 150
	DefaultStreams  int           // of the production spec, with 2*Events events: 2
	FaultStreams    int           // through a failing sink and failing outbox deletes: 4
	HotKeyOrders    int           // concurrent orders into one window and key: 50
	HotKeyTimeout   time.Duration // 2 minutes
	ConcurrentTicks int           // ticks run at once: 4
	ChaosOrders     int           // sent from four goroutines while two tickers run: 400
	Options         []stream.Option
	// RandomBatches makes the property tests hand consecutive deliveries to
	// HandleBatch in batches of random size, which must change nothing the
	// model can see.
	RandomBatches bool
}

func (f Features) withDefaults() Features {
	f.Streams, f.Events, f.DefaultStreams = cmp.Or(f.Streams, 10), cmp.Or(f.Events, 150), cmp.Or(f.DefaultStreams, 2)
	f.FaultStreams, f.HotKeyOrders, f.HotKeyTimeout = cmp.Or(f.FaultStreams, 4), cmp.Or(f.HotKeyOrders, 50), cmp.Or(f.HotKeyTimeout, 2*time.Minute)
	f.ConcurrentTicks, f.ChaosOrders = cmp.Or(f.ConcurrentTicks, 4), cmp.Or(f.ChaosOrders, 400)
	return f
}

// RunWith runs the suite sized by f. newStore must return an empty store
// of its own for every call (the suite calls it per subtest).
func RunWith(t *testing.T, newStore func(t *testing.T) docstore.Store, f Features) {
	f = f.withDefaults()
	en := env{newStore: newStore, f: f}
	t.Run("SeedStories", func(t *testing.T) { testSeeds(t, en) })
	t.Run("DeadLetters", func(t *testing.T) { testDeadLetters(t, en) })
	t.Run("TwoAggregations", func(t *testing.T) { testTwoAggregations(t, en, f) })
	t.Run("ShippedPairScenario", func(t *testing.T) { testMultiScenario(t, en) })
	t.Run("RestartWhileOpen", func(t *testing.T) { testRestartWhileOpen(t, en) })
	for _, p := range properties {
		t.Run(p.name, func(t *testing.T) { testProperty(t, en, f, p.property) })
	}
	t.Run("HotKey", func(t *testing.T) { testHotKey(t, en, f) })
	t.Run("ConcurrentTicks", func(t *testing.T) { testConcurrentTicks(t, en, f) })
	t.Run("OrdersDuringTicks", func(t *testing.T) { testOrdersDuringTicks(t, en, f) })
	t.Run("TickLease", func(t *testing.T) { testTickLease(t, en) })
	t.Run("SinkDownLosesNoPane", func(t *testing.T) { testSinkDown(t, en) })
	t.Run("CrashBeforeOutboxDelete", func(t *testing.T) { testCrashBeforeOutboxDelete(t, en) })
	t.Run("RandomFaults", func(t *testing.T) { testRandomFaults(t, en, f) })
	t.Run("PoisonCell", func(t *testing.T) { testPoisonCell(t, en) })
	t.Run("Headroom", func(t *testing.T) { testHeadroom(t, en) })
}

type env struct {
	newStore func(t *testing.T) docstore.Store
	f        Features
}

// rig is a processor over a recorded store and a recording sink.
type rig struct {
	t       *testing.T
	store   *Recorder
	sink    *Sink
	p       *stream.Processor
	specs   []window.Spec
	opts    []stream.Option
	batches bool // Features.RandomBatches
}

func newRig(t *testing.T, e env, specs ...window.Spec) *rig {
	t.Helper()
	rec := NewRecorder(e.newStore(t))
	sink := NewSink()
	p, err := stream.New(rec, sink, specs, IsCountry, testLogger(t), e.f.Options...)
	if err != nil {
		t.Fatalf("stream.New: %v", err)
	}
	return &rig{t: t, store: rec, sink: sink, p: p, specs: specs, opts: e.f.Options, batches: e.f.RandomBatches}
}

// open counts the state of aggregation agg still stored: state and parked
// documents, open sessions (an emptied part stays) and agenda entries.
func (r *rig) open(agg string) int {
	r.t.Helper()
	n := r.count("aggregations/"+agg+"/state") + r.count("aggregations/"+agg+"/parked")
	for _, d := range r.list("aggregations/" + agg + "/sessions") {
		var sp struct {
			Keys map[string][]json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(d.Data, &sp); err != nil {
			r.t.Fatalf("%s: %v", d.Path, err)
		}
		for _, ss := range sp.Keys {
			n += len(ss)
		}
	}
	var fold struct {
		Windows map[string]json.RawMessage `json:"windows"`
		Agenda  map[string]json.RawMessage `json:"agenda"`
	}
	if d := ReadDoc(r.t, r.store, "aggregations/"+agg+"/control/fold"); d.Exists {
		if err := json.Unmarshal(d.Data, &fold); err != nil {
			r.t.Fatalf("%s: %v", d.Path, err)
		}
	}
	return n + len(fold.Windows) + len(fold.Agenda)
}

// outbox counts the rows waiting in every outbox.
func (r *rig) outbox() int {
	r.t.Helper()
	colls := []string{"stream/deadletters/outbox"}
	for _, s := range r.specs {
		colls = append(colls, "aggregations/"+s.Name+"/outbox")
	}
	n := 0
	for _, c := range colls {
		for _, d := range r.list(c) {
			n += outboxRows(d.Data)
		}
	}
	return n
}

// panes are the panes of the rig's first aggregation.
func (r *rig) panes() []window.Pane { return r.panesOf(r.specs[0].Name) }

func (r *rig) panesOf(agg string) []window.Pane {
	r.t.Helper()
	i := slices.IndexFunc(r.specs, func(s window.Spec) bool { return s.Name == agg })
	if i < 0 {
		r.t.Fatalf("no aggregation %s", agg)
	}
	ps, err := r.sink.PanesOf(r.specs[i])
	if err != nil {
		r.t.Fatal(err)
	}
	return ps
}

func (r *rig) drops(agg string) []windowtest.Drop {
	r.t.Helper()
	ds, err := r.sink.Drops(agg)
	if err != nil {
		r.t.Fatal(err)
	}
	return ds
}

func (r *rig) sameInvalid(want []string) {
	r.t.Helper()
	inv, err := r.sink.InvalidMessages()
	if err != nil {
		r.t.Fatal(err)
	}
	slices.Sort(inv)
	if diff := gocmp.Diff(want, inv, cmpopts.EquateEmpty()); diff != "" {
		r.t.Errorf("dead-lettered messages (-model +sink):\n%s", diff)
	}
}

// clean checks what every test ends with: an empty outbox, and no row
// identity appended with two different rows.
func (r *rig) clean() {
	r.t.Helper()
	if n := r.outbox(); n != 0 {
		r.t.Errorf("%d rows left in the outbox", n)
	}
	r.noConflicts()
}

func (r *rig) noConflicts() {
	r.t.Helper()
	if c := r.sink.Conflicts(); len(c) > 0 {
		r.t.Errorf("rows written twice with different values under one identity:\n%s", strings.Join(c, "\n"))
	}
}

// steps cuts n events into the steps the property tests take, by first
// event: one event, or with RandomBatches a run of 1 to 8 consecutive
// deliveries (batchable reports those), so that duplicates, late
// corrections and drops of one (window, key) share a batch.
func (r *rig) steps(n int, batchable func(i int) bool, seed uint64) iter.Seq2[int, int] {
	rnd := rand.New(rand.NewPCG(uint64(n), seed))
	return func(yield func(int, int) bool) {
		for i := 0; i < n; {
			k := 1
			if r.batches && batchable(i) {
				for size := 1 + rnd.IntN(8); k < size && i+k < n && batchable(i+k); k++ {
				}
			}
			if !yield(i, k) {
				return
			}
			i += k
		}
	}
}

func paneCount(s *Sink) int { return s.Count(warehouse.VentasHoraPaisPaneles) }

func discardCount(s *Sink) int { return s.Count(warehouse.PedidosDescartados) }

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}
