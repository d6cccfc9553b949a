package cost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/docstore/boltstore"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

// PerMillion expresses a share of messages exactly, as parts per million.
type PerMillion int64

// Country is a key of the aggregation and its share of the orders, in
// parts per million of the orders.
type Country struct {
	Code  string     `json:"code"`
	Share PerMillion `json:"share_ppm"`
}

// DelayBand is a share of the orders whose arrival trails their event time
// by a delay drawn uniformly from [Min, Max).
type DelayBand struct {
	Share PerMillion    `json:"share_ppm"`
	Min   time.Duration `json:"min"`
	Max   time.Duration `json:"max"`
}

// Scenario is the simulated traffic. Orders arrive at a constant rate (the
// day's average): every country has orders in every hour, which is the most
// open windows a tick can meet, so the tick figures are an upper bound for
// the quiet hours of the night.
type Scenario struct {
	OrdersPerDay int64         `json:"orders_per_day"`
	Start        time.Time     `json:"start"`
	WarmUp       time.Duration `json:"warm_up"`  // simulated, not counted: fills the open windows
	Measured     time.Duration `json:"measured"` // counted, then extrapolated linearly
	TickEvery    time.Duration `json:"tick_every"`
	Countries    []Country     `json:"countries"` // shares add up to one million
	Delays       []DelayBand   `json:"delays"`    // shares add up to one million
	// Duplicates: deliveries repeated by Pub/Sub (at-least-once), RedeliverAfter
	// after the first. Invalid: messages that are not a valid order (here: no
	// momento_evento attribute).
	Duplicates     PerMillion    `json:"duplicates_ppm"`
	RedeliverAfter time.Duration `json:"redeliver_after"`
	Invalid        PerMillion    `json:"invalid_ppm"`
	// Lines is how many lines an order has (shares add up to one million);
	// the lines of an order have distinct SKUs (the shop's cart merges a
	// product added twice), drawn from Catalogue.
	Lines     []LineCount `json:"lines"`
	Catalogue Catalogue   `json:"catalogue"`
	Seed      uint64      `json:"seed"`
	// Specs are the aggregations the processor runs: every shipped one
	// (internal/aggregation) unless a variant says otherwise.
	Specs []window.Spec `json:"specs"`
}

// LineCount is a share of the orders that have Lines lines.
type LineCount struct {
	Lines int        `json:"lines"`
	Share PerMillion `json:"share_ppm"`
}

// Catalogue is the SKUs an order line is drawn from: SKUs of them, ranked
// by popularity, the one of rank r drawn with a weight proportional to 1/r
// (Zipf's law with exponent 1). Top names the first ranks; the others get
// generated codes.
type Catalogue struct {
	SKUs int      `json:"skus"`
	Top  []string `json:"top"`
}

// DefaultScenario is AlpinaShop's traffic: 50,000 orders a day over 30
// countries, Spain first, with a tail of orders held by mobile clients,
// 2.3 lines an order over a catalogue of 3,000 SKUs, run through every
// shipped aggregation. The shares are assumptions, stated in docs/cost.md.
func DefaultScenario() (Scenario, error) {
	decls, err := aggregation.Default()
	if err != nil {
		return Scenario{}, fmt.Errorf("default scenario: %w", err)
	}
	var specs []window.Spec
	for _, d := range decls {
		specs = append(specs, d.Spec())
	}
	return Scenario{
		OrdersPerDay: 50_000,
		Start:        time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
		WarmUp:       4 * time.Hour,
		Measured:     time.Hour,
		TickEvery:    time.Minute,
		Countries:    defaultCountries(),
		Delays: []DelayBand{
			{Share: 970_000, Min: 0, Max: 10 * time.Second},                // online: published at once
			{Share: 20_000, Min: 10 * time.Second, Max: 15 * time.Minute},  // metro, lifts: minutes
			{Share: 8_000, Min: 15 * time.Minute, Max: 90 * time.Minute},   // late: after the ON_TIME pane
			{Share: 2_000, Min: 150 * time.Minute, Max: 240 * time.Minute}, // hours: mostly too late
		},
		Duplicates:     2_000,
		RedeliverAfter: 30 * time.Second,
		Invalid:        1_000,
		// 2.3 lines an order on average (the figure).
		Lines: []LineCount{{1, 350_000}, {2, 300_000}, {3, 150_000}, {4, 100_000}, {5, 100_000}},
		// About 500 products in sizes and colours; Zipf's law with exponent 1
		// gives the top 20% of the SKUs 81% of the lines, the shop's 80/20.
		Catalogue: Catalogue{SKUs: 3_000, Top: []string{"MOCH-40L-AZ", "MOCH-25L-VR", "BOTA-TREK-42", "GORRO-LANA-RJ",
			"CALCET-MERINO", "FRONTAL-LED", "BASTON-CARB", "CHAQ-GTX-M"}},
		Seed:  20261123,
		Specs: specs,
	}, nil
}

func defaultCountries() []Country {
	// Spain, its neighbours and the big markets carry most of the orders;
	// the other 22 share the rest equally.
	big := []Country{
		{"ES", 350_000}, {"FR", 120_000}, {"PT", 100_000}, {"DE", 80_000},
		{"IT", 80_000}, {"GB", 40_000}, {"NL", 30_000}, {"BE", 24_000},
	}
	rest := []string{"AT", "CH", "IE", "DK", "SE", "NO", "FI", "PL", "CZ", "SK", "HU",
		"RO", "BG", "GR", "HR", "SI", "LU", "EE", "LV", "LT", "MT", "CY"}
	var used PerMillion
	for _, c := range big {
		used += c.Share
	}
	each := (1_000_000 - used) / PerMillion(len(rest))
	out := append([]Country(nil), big...)
	for i, code := range rest {
		s := each
		if i == 0 {
			s += (1_000_000 - used) - each*PerMillion(len(rest)) // remainder, so shares sum to one million
		}
		out = append(out, Country{code, s})
	}
	return out
}

func (s Scenario) check() error {
	var errs []error
	if s.OrdersPerDay <= 0 || s.Measured <= 0 || s.WarmUp < 0 || s.TickEvery <= 0 {
		errs = append(errs, errors.New("orders per day, measured interval and tick interval must be positive"))
	}
	if s.Measured%s.TickEvery != 0 || s.WarmUp%s.TickEvery != 0 {
		errs = append(errs, fmt.Errorf("warm-up %v and measured %v must be whole numbers of ticks (%v)", s.WarmUp, s.Measured, s.TickEvery))
	}
	var cs, ds, ls PerMillion
	for _, c := range s.Countries {
		cs += c.Share
	}
	for _, l := range s.Lines {
		ls += l.Share
		if l.Lines < 1 || l.Lines > s.Catalogue.SKUs {
			errs = append(errs, fmt.Errorf("orders of %d lines: want 1 to the catalogue's %d SKUs", l.Lines, s.Catalogue.SKUs))
		}
	}
	if ls != 1_000_000 {
		errs = append(errs, fmt.Errorf("line count shares add up to %d ppm, want 1,000,000", ls))
	}
	if s.Catalogue.SKUs < len(s.Catalogue.Top) {
		errs = append(errs, fmt.Errorf("catalogue of %d SKUs names %d", s.Catalogue.SKUs, len(s.Catalogue.Top)))
	}
	for _, d := range s.Delays {
		ds += d.Share
		if d.Max <= d.Min {
			errs = append(errs, fmt.Errorf("delay band [%v, %v) is empty", d.Min, d.Max))
		}
	}
	if cs != 1_000_000 || ds != 1_000_000 {
		errs = append(errs, fmt.Errorf("country shares add up to %d ppm and delay shares to %d ppm, want 1,000,000 each", cs, ds))
	}
	if len(s.Specs) == 0 {
		errs = append(errs, errors.New("no aggregation"))
	}
	for _, sp := range s.Specs {
		if err := sp.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Measurement is what the processor did in the measured interval of a
// Scenario, counted by CountingStore and CountingSink.
type Measurement struct {
	// Orders is the messages published in the interval (Invalid of them not
	// valid orders); Deliveries adds the Pub/Sub redeliveries.
	Orders     int64 `json:"orders"`
	Invalid    int64 `json:"invalid"`
	Deliveries int64 `json:"deliveries"`
	// Fates of the deliveries: accepted, duplicate, too_late, invalid; Late
	// counts the accepted ones that were late.
	Fates map[stream.Fate]int64 `json:"fates"`
	Late  int64                 `json:"late"`
	Ticks int64                 `json:"ticks"`
	// Lines is the order lines of the valid messages published in the
	// interval.
	Lines int64 `json:"lines"`
	// OpenWindows is, per aggregation, the sum over the ticks of the
	// windows open when each tick started (AggregationTick.OpenWindows).
	OpenWindows map[string]int64 `json:"open_windows"`
	// MessageBytes is the data plus attribute bytes of the deliveries.
	MessageBytes int64 `json:"message_bytes"`
	OrderOps     Ops   `json:"order_ops"`
	TickOps      Ops   `json:"tick_ops"`
	// Appends per table, charged to Handle (order) or Tick (tick).
	OrderAppends map[string]Appends `json:"order_appends"`
	TickAppends  map[string]Appends `json:"tick_appends"`
	// PaneViews holds, per panes table, the bytes of its dashboard view's
	// columns in the pane rows and the rows (over the whole run, warm-up
	// included).
	PaneViews map[string]PaneView `json:"pane_views"`
}

// PaneView is the size of the view columns of a panes table's rows.
type PaneView struct {
	Bytes int64 `json:"bytes"`
	Panes int64 `json:"panes"`
}

// Measure drives the real stream.Processor over a CountingStore on a
// boltstore file in dir with the traffic of sc, and returns the counts of
// the measured interval. The processor runs one call at a time (a Handle
// or a Tick), so every operation is charged to the call that made it.
func Measure(ctx context.Context, dir string, sc Scenario) (Measurement, error) {
	sim, closeStore, err := newSimulation(dir, sc)
	if err != nil {
		return Measurement{}, fmt.Errorf("measure: %w", err)
	}
	defer closeStore()
	from := sc.Start.Add(sc.WarmUp)
	if err := sim.runUntil(ctx, from); err != nil {
		return Measurement{}, fmt.Errorf("measure: warm-up: %w", err)
	}
	before := sim.snapshot()
	sim.counting = true
	if err := sim.runUntil(ctx, from.Add(sc.Measured)); err != nil {
		return Measurement{}, fmt.Errorf("measure: %w", err)
	}
	after := sim.snapshot()
	m := sim.m
	m.OrderOps = after.order.Sub(before.order)
	m.TickOps = after.tick.Sub(before.tick)
	m.OrderAppends, m.TickAppends = map[string]Appends{}, map[string]Appends{}
	for _, t := range sinkTables(sc.Specs) {
		m.OrderAppends[t] = after.orderAppends[t].sub(before.orderAppends[t])
		m.TickAppends[t] = after.tickAppends[t].sub(before.tickAppends[t])
	}
	m.PaneViews = sim.sink.PaneViews()
	return m, nil
}

// sinkTables are the tables the processor appends to: every aggregation's
// panes and the discarded messages.
func sinkTables(specs []window.Spec) []string {
	var out []string
	for _, s := range specs {
		out = append(out, aggregation.PanesTable(s.Name))
	}
	return append(out, warehouse.PedidosDescartados)
}

// simulation replays a Scenario against a processor, event by event.
type simulation struct {
	sc    Scenario
	p     *stream.Processor
	store *CountingStore
	sink  *CountingSink
	rng   *rand.Rand
	skus  catalogue

	interval time.Duration // between new messages
	seq      int64
	next     time.Time    // the next new message
	tick     time.Time    // the next tick
	pending  []redelivery // in arrival order: each comes a fixed delay after its first delivery

	// aroundTick and aroundHandle, when set, run each Tick and each
	// Handle (benchmarks time them).
	aroundTick   func(tick func() error) error
	aroundHandle func(handle func() error) error

	m        Measurement
	counting bool
}

type redelivery struct {
	at time.Time
	d  order.Delivery
}

func newSimulation(dir string, sc Scenario) (*simulation, func(), error) {
	if err := sc.check(); err != nil {
		return nil, nil, err
	}
	bs, err := boltstore.Open(filepath.Join(dir, "state.db"))
	if err != nil {
		return nil, nil, err
	}
	store := NewCountingStore(bs)
	sink := NewCountingSink(sc.Specs)
	// One instance with a fixed name: what it names (its batches), and so
	// the counts, are the same at every run.
	p, err := stream.New(store, sink, sc.Specs, contract.IsCountry, slog.New(slog.DiscardHandler), stream.WithInstanceID("sim"))
	if err != nil {
		bs.Close()
		return nil, nil, err
	}
	return &simulation{
		sc: sc, p: p, store: store, sink: sink, rng: rand.New(rand.NewPCG(sc.Seed, 1)),
		skus:     newCatalogue(sc.Catalogue),
		interval: time.Duration(int64(24*time.Hour) / sc.OrdersPerDay),
		next:     sc.Start,
		tick:     sc.Start.Add(sc.TickEvery),
		m:        Measurement{Fates: map[stream.Fate]int64{}, OpenWindows: map[string]int64{}},
	}, func() { bs.Close() }, nil
}

type snapshot struct {
	order, tick               Ops
	orderAppends, tickAppends map[string]Appends
}

func (s *simulation) snapshot() snapshot {
	sn := snapshot{order: s.store.Ops(PhaseOrder), tick: s.store.Ops(PhaseTick),
		orderAppends: map[string]Appends{}, tickAppends: map[string]Appends{}}
	for _, t := range sinkTables(s.sc.Specs) {
		sn.orderAppends[t] = s.sink.Appends(PhaseOrder, t)
		sn.tickAppends[t] = s.sink.Appends(PhaseTick, t)
	}
	return sn
}

// runUntil handles every event before end, in time order: new messages,
// redeliveries and ticks, messages before a tick at the same instant.
func (s *simulation) runUntil(ctx context.Context, end time.Time) error {
	for {
		at, kind := s.next, "new"
		if len(s.pending) > 0 && s.pending[0].at.Before(at) {
			at, kind = s.pending[0].at, "again"
		}
		if s.tick.Before(at) {
			at, kind = s.tick, "tick"
		}
		if !at.Before(end) {
			return nil
		}
		var err error
		switch kind {
		case "new":
			s.seq++
			d := s.newMessage(s.seq, at)
			if s.rng.IntN(1_000_000) < int(s.sc.Duplicates) {
				s.pending = append(s.pending, redelivery{at: at.Add(s.sc.RedeliverAfter), d: d})
			}
			if s.counting {
				s.m.Orders++
			}
			err = s.deliver(ctx, d, at)
			s.next = s.next.Add(s.interval)
		case "again":
			d := s.pending[0].d
			s.pending = s.pending[1:]
			err = s.deliver(ctx, d, at)
		case "tick":
			err = s.runTick(ctx, at)
			s.tick = s.tick.Add(s.sc.TickEvery)
		}
		if err != nil {
			return err
		}
	}
}

func (s *simulation) runTick(ctx context.Context, at time.Time) error {
	s.store.SetPhase(PhaseTick)
	s.sink.SetPhase(PhaseTick)
	defer func() {
		s.store.SetPhase(PhaseOrder)
		s.sink.SetPhase(PhaseOrder)
	}()
	var res stream.TickResult
	tick := func() error {
		var err error
		res, err = s.p.Tick(ctx, at)
		return err
	}
	var err error
	if s.aroundTick != nil {
		err = s.aroundTick(tick)
	} else {
		err = tick()
	}
	if err != nil {
		return fmt.Errorf("tick at %s: %w", at.Format(time.RFC3339), err)
	}
	if s.counting {
		s.m.Ticks++
		for _, a := range res.Aggregations {
			s.m.OpenWindows[a.Aggregation] += int64(a.OpenWindows)
		}
	}
	return nil
}

// deliver hands one delivery to Handle and records its fate.
func (s *simulation) deliver(ctx context.Context, d order.Delivery, now time.Time) error {
	var res stream.Result
	handle := func() error {
		var err error
		res, err = s.p.Handle(ctx, d, now)
		return err
	}
	var err error
	if s.aroundHandle != nil {
		err = s.aroundHandle(handle)
	} else {
		err = handle()
	}
	if err != nil {
		return fmt.Errorf("handle message %s at %s: %w", d.Message.ID(), now.Format(time.RFC3339), err)
	}
	if !s.counting {
		return nil
	}
	s.m.Deliveries++
	s.m.MessageBytes += int64(len(d.Message.Data))
	for k, v := range d.Message.Attributes {
		s.m.MessageBytes += int64(len(k) + len(v))
	}
	f := res.Fate()
	if f == stream.Invalid && res.Duplicate {
		f = stream.Duplicate
	}
	s.m.Fates[f]++
	if f == stream.Invalid && !res.Duplicate {
		s.m.Invalid++
	}
	if f == stream.Accepted && res.Aggregations[0].Lateness == window.Late {
		s.m.Late++
	}
	return nil
}

// newMessage renders message seq, published at arrival: an order as the
// web shop sends it, from a country and with an event-time delay drawn from
// the scenario, or an invalid message.
func (s *simulation) newMessage(seq int64, arrival time.Time) order.Delivery {
	id := "W-" + strconv.FormatInt(1_000_000+seq, 10)
	country := s.pickCountry()
	ranks := s.pickSKUs()
	body := []byte(`{"pedido_id":"` + id + `","cliente_id":"C-` + strconv.Itoa(10_000+s.rng.IntN(90_000)) +
		`","pais":"` + country + `","importe_total":"`)
	var total int64 // cents
	var items []byte
	for i, r := range ranks {
		qty := 1 + s.rng.IntN(3)
		cents := int64(500 + s.rng.IntN(30_000))
		total += int64(qty) * cents
		if i > 0 {
			items = append(items, ',')
		}
		items = append(items, `{"sku":"`+s.skus.names[r]+`","cantidad":`+strconv.Itoa(qty)+
			`,"precio_unitario":"`+cents2(cents)+`"}`...)
	}
	body = append(body, cents2(total)+`","lineas":[`...)
	body = append(body, items...)
	body = append(body, "]}"...)
	event := arrival.Add(-s.pickDelay())
	attrs := map[string]string{order.EventTimeAttribute: event.Format(time.RFC3339Nano)}
	if s.rng.IntN(1_000_000) < int(s.sc.Invalid) {
		attrs = map[string]string{} // the web shop forgot momento_evento
	} else if s.counting {
		s.m.Lines += int64(len(ranks))
	}
	return order.Delivery{Format: "push", Message: order.Message{
		MessageID: "m-" + strconv.FormatInt(seq, 10), Data: body, Attributes: attrs, PublishTime: arrival,
	}}
}

// pickSKUs draws an order's line count from the scenario and as many
// distinct SKUs (ranks in the catalogue).
func (s *simulation) pickSKUs() []int {
	n := s.sc.Lines[len(s.sc.Lines)-1].Lines
	r := PerMillion(s.rng.IntN(1_000_000))
	for _, l := range s.sc.Lines {
		if r < l.Share {
			n = l.Lines
			break
		}
		r -= l.Share
	}
	ranks := make([]int, 0, n)
	for len(ranks) < n {
		if k := s.skus.draw(s.rng); !slices.Contains(ranks, k) {
			ranks = append(ranks, k)
		}
	}
	return ranks
}

func cents2(c int64) string {
	return strconv.FormatInt(c/100, 10) + "." + fmt.Sprintf("%02d", c%100)
}

func (s *simulation) pickCountry() string {
	r := PerMillion(s.rng.IntN(1_000_000))
	for _, c := range s.sc.Countries {
		if r < c.Share {
			return c.Code
		}
		r -= c.Share
	}
	return s.sc.Countries[len(s.sc.Countries)-1].Code
}

func (s *simulation) pickDelay() time.Duration {
	r := PerMillion(s.rng.IntN(1_000_000))
	for _, b := range s.sc.Delays {
		if r < b.Share {
			return b.Min + time.Duration(s.rng.Int64N(int64(b.Max-b.Min)))
		}
		r -= b.Share
	}
	return 0
}
