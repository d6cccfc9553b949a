package windowtest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/window"
)

// StreamConfig shapes a random stream. Zero fields take the defaults shown.
type StreamConfig struct {
	Start  time.Time // processing time of the first event: 2026-03-14T17:00:00Z
	Events int       // events before the closing tick: 200
	Keys   []string  // key values: ES, FR, PT (MultiStream: the pais values)
	SKUs   []string  // MultiStream only: SKUs of the lines, see DefaultSKUs
	// Open leaves out the closing tick, late and idle enough to expire every
	// window, after which the dashboard must equal Multi.Final.
	Open bool
}

// InvalidReasons are the kinds of broken message a stream contains.
var InvalidReasons = []string{
	"invalid: bad JSON",
	"invalid: missing pedido_id",
	"invalid: importe_total is not a decimal",
	"invalid: bad pais",
	"invalid: missing momento_evento",
}

// Stream generates deliveries of SimpleOrders keyed by pais and ticks for
// spec with non-decreasing processing times: orders on time, late, too late
// and from clocks running ahead, on window boundaries, redeliveries,
// republishes, invalid messages, bursts, idle gaps and repeated ticks. The
// same r state gives the same stream.
func Stream(r *rand.Rand, spec window.Spec, cfg StreamConfig) []MultiEvent {
	cfg = cfg.withDefaults()
	g := gen{r: r, spec: spec}
	return events(r, cfg, []window.Spec{spec}, func() gen { return g },
		func(g gen, now time.Time, p, n int, msg string) MultiEvent {
			e := MultiEvent{Kind: Deliver, Now: now, MessageID: msg}
			if p < 41 {
				e.Order = SimpleOrder(fmt.Sprintf("X-%06d", n), "ES", now, window.Measures{})
				e.Invalid = InvalidReasons[r.IntN(len(InvalidReasons))]
				return e
			}
			key := cfg.Keys[r.IntN(len(cfg.Keys))]
			e.Order = SimpleOrder(fmt.Sprintf("P-%06d", n), key, g.eventTime(now, cfg.Start), g.measures())
			return e
		})
}

// SimpleOrder is an order of pais with measures m: one line carrying all
// its units at the whole importe.
func SimpleOrder(id, pais string, eventTime time.Time, m window.Measures) order.Order {
	o := order.Order{PedidoID: id, ClienteID: "C-" + id, Pais: pais, EventTime: eventTime, ImporteTotal: m.Importe}
	if m.Unidades > 0 {
		o.Lineas = []order.Line{{SKU: "MOCH-40L-AZ", Cantidad: m.Unidades, PrecioUnitario: m.Importe}}
	}
	return o
}

// events is the skeleton of Stream and MultiStream: each step is a tick, a
// redelivery or a republish of an earlier message, or fresh(g, now, p, n,
// message id), the n-th new message with p the step's draw in [0, 100).
func events(r *rand.Rand, cfg StreamConfig, specs []window.Spec, next func() gen,
	fresh func(g gen, now time.Time, p, n int, msg string) MultiEvent) []MultiEvent {
	tick := func(now time.Time) MultiEvent { return MultiEvent{Kind: Tick, Now: now} }
	resend := func(e MultiEvent, now time.Time, msg string) MultiEvent {
		e.Now, e.MessageID = now, cmp.Or(msg, e.MessageID)
		return e
	}
	now := cfg.Start.UTC()
	var out, sent []MultiEvent
	orders, messages := 0, 0
	nextMessage := func() string { messages++; return fmt.Sprintf("m-%06d", messages) }
	for range cfg.Events {
		g := next()
		now = now.Add(g.gap())
		switch p := r.IntN(100); {
		case p < 25:
			out = append(out, tick(now))
			if r.IntN(8) == 0 {
				out = append(out, tick(now)) // overlapping scheduler call
			}
		case p < 33 && len(sent) > 0:
			out = append(out, resend(sent[r.IntN(len(sent))], now, ""))
		case p < 37 && len(sent) > 0:
			out = append(out, resend(sent[r.IntN(len(sent))], now, nextMessage()))
		default:
			orders++
			e := fresh(g, now, p, orders, nextMessage())
			out, sent = append(out, e), append(sent, e)
		}
	}
	if !cfg.Open {
		var closing time.Duration
		for _, s := range specs {
			closing = max(closing, s.IdleTimeout+s.OutOfOrderness+s.Size()+s.AllowedLateness+s.EarlyDelay+s.LateDelay)
		}
		out = append(out, tick(now.Add(closing+24*time.Hour)))
	}
	return out
}

func (cfg StreamConfig) withDefaults() StreamConfig {
	if cfg.Start.IsZero() {
		cfg.Start = time.Date(2026, 3, 14, 17, 0, 0, 0, time.UTC)
	}
	cfg.Events = cmp.Or(cfg.Events, 200)
	if len(cfg.Keys) == 0 {
		cfg.Keys = []string{"ES", "FR", "PT"}
	}
	if len(cfg.SKUs) == 0 {
		cfg.SKUs = DefaultSKUs
	}
	return cfg
}

type gen struct {
	r    *rand.Rand
	spec window.Spec
}

// between returns a uniform duration in [lo, hi], to the nanosecond.
func (g gen) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(g.r.Int64N(int64(hi-lo)+1))
}

// gap is the processing time between two events. Half the gaps are whole
// multiples of 15 s, like every delay RandomSpec draws, so that "exactly E
// (or Ld, or I) later" happens often instead of with probability zero.
func (g gen) gap() time.Duration {
	s := g.spec
	var d time.Duration
	switch p := g.r.IntN(100); {
	case p < 20: // a burst: several events at one instant
	case p < 60:
		d = g.between(0, 20*time.Second)
	case p < 85:
		d = g.between(20*time.Second, 2*time.Minute)
	case p < 97:
		d = g.between(2*time.Minute, s.IdleTimeout+s.EarlyDelay+s.LateDelay+2*time.Minute)
	default: // the night: the source goes idle, windows close and expire
		d = g.between(s.Size(), s.Size()+s.AllowedLateness+s.OutOfOrderness+s.IdleTimeout)
	}
	if g.r.IntN(2) == 0 {
		d = d.Truncate(15 * time.Second)
	}
	return d
}

// eventTime picks an order's event time relative to its arrival; half of
// them on the same 15 s grid as the gaps, so event times also meet window
// ends and watermarks exactly.
func (g gen) eventTime(now, origin time.Time) time.Time {
	s := g.spec
	d := max(s.OutOfOrderness, 30*time.Second)
	var ago time.Duration // before now; negative: after
	switch p := g.r.IntN(100); {
	case p < 45: // the usual few seconds or minutes in transit
		ago = g.between(0, d)
	case p < 60: // the customer on the metro
		ago = g.between(d, s.Size()+d)
	case p < 75: // late, often within the allowed lateness
		ago = g.between(s.Size(), s.Size()+s.AllowedLateness+d)
	case p < 85: // mostly too late
		ago = g.between(s.Size()+s.AllowedLateness, 2*(s.Size()+s.AllowedLateness+d))
	case p < 92: // a device whose clock runs ahead
		ago = -g.between(time.Nanosecond, 2*d+5*time.Minute)
	default: // exactly on a window boundary, or the last instant before one
		ago = now.Sub(g.spec.WindowOf(now.Add(-g.between(0, s.Size()+s.AllowedLateness))).Start)
		if g.r.IntN(2) == 0 {
			ago += time.Nanosecond
		}
	}
	t := now.Add(-ago)
	if g.r.IntN(2) == 0 {
		t = origin.Add(t.Sub(origin).Truncate(15 * time.Second))
	}
	return t
}

func (g gen) measures() window.Measures {
	cents := g.r.Int64N(100_000) + 1 // 0.01 to 1000.00
	lines := make([]int64, 1+g.r.IntN(4))
	for i := range lines {
		lines[i] = 1 + g.r.Int64N(3)
	}
	m, err := window.OrderMeasures(numeric.FromNanos(cents*10_000_000), lines...)
	if err != nil {
		panic(err) // small values cannot overflow
	}
	return m
}

// RandomSpec returns a valid spec with sizes and delays drawn to make the
// interesting cases frequent in short streams.
func RandomSpec(r *rand.Rand) window.Spec {
	s := window.Defaults()
	s.WindowSize = pick(r, time.Hour, 10*time.Minute, 7*time.Minute, 25*time.Minute, 90*time.Second)
	s.OutOfOrderness = pick(r, 0, 30*time.Second, 2*time.Minute, 10*time.Minute)
	s.IdleTimeout = pick(r, time.Minute, 5*time.Minute)
	s.EarlyDelay = pick(r, 0, 30*time.Second, time.Minute, 3*time.Minute)
	s.AllowedLateness = pick(r, 0, 5*time.Minute, 30*time.Minute, 2*time.Hour)
	s.LateDelay = pick(r, time.Minute, time.Minute, 90*time.Second, 3*time.Minute)
	s.Accumulation = pick(r, window.Accumulating, window.Discarding)
	_ = r.IntN(3) // keeps every seed's streams: the property tests' coverage was sized on them
	return s
}

func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }
