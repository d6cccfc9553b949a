package windowtest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// StreamConfig shapes a random stream. Zero fields take the defaults shown.
type StreamConfig struct {
	Start  time.Time // processing time of the first event: 2026-03-14T17:00:00Z
	Events int       // events before the closing tick: 200
	Keys   []string  // key values: ES, FR, PT (MultiStream: the pais values)
	SKUs   []string  // MultiStream only: SKUs of the lines, see DefaultSKUs
	// Open leaves out the closing tick, late and idle enough to expire every
	// window, after which the dashboard must equal Model.Final.
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

// Stream generates deliveries and ticks for spec with non-decreasing
// processing times: orders on time, late, too late and from clocks running
// ahead, on window boundaries, redeliveries, republishes, invalid messages,
// bursts, idle gaps and repeated ticks. The same r state gives the same stream.
func Stream(r *rand.Rand, spec window.Spec, cfg StreamConfig) []Event {
	cfg = cfg.withDefaults()
	g := gen{r: r, spec: spec}
	closing := spec.IdleTimeout + spec.OutOfOrderness + spec.WindowSize + spec.AllowedLateness +
		spec.EarlyDelay + spec.LateDelay + 24*time.Hour
	return events(r, cfg, closing, func() gen { return g },
		func(now time.Time) Event { return Event{Kind: Tick, Now: now} },
		func(e Event, now time.Time, msg string) Event {
			e.Now, e.MessageID = now, cmp.Or(msg, e.MessageID)
			return e
		},
		func(g gen, now time.Time, p, n int, msg string) Event {
			if p < 41 {
				return Event{Kind: Deliver, Now: now, MessageID: msg, Order: window.Order{ID: fmt.Sprintf("X-%06d", n)},
					Invalid: InvalidReasons[r.IntN(len(InvalidReasons))]}
			}
			return Event{Kind: Deliver, Now: now, MessageID: msg, Order: window.Order{
				ID:        fmt.Sprintf("P-%06d", n),
				Key:       cfg.Keys[r.IntN(len(cfg.Keys))],
				EventTime: g.eventTime(now, cfg.Start),
				Measures:  g.measures(),
			}}
		})
}

// events is the skeleton of Stream and MultiStream: each step is a tick, a
// redelivery or a republish of an earlier message, or fresh(g, now, p, n,
// message id), the n-th new message with p the step's draw in [0, 100).
func events[E any](r *rand.Rand, cfg StreamConfig, closing time.Duration, next func() gen,
	tick func(time.Time) E, resend func(e E, now time.Time, msg string) E,
	fresh func(g gen, now time.Time, p, n int, msg string) E) []E {
	now := cfg.Start.UTC()
	var out, sent []E
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
		out = append(out, tick(now.Add(closing)))
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
	d := g.rawGap()
	if g.r.IntN(2) == 0 {
		d = d.Truncate(15 * time.Second)
	}
	return d
}

func (g gen) rawGap() time.Duration {
	s := g.spec
	switch p := g.r.IntN(100); {
	case p < 20:
		return 0 // a burst: several events at one instant
	case p < 60:
		return g.between(0, 20*time.Second)
	case p < 85:
		return g.between(20*time.Second, 2*time.Minute)
	case p < 97:
		return g.between(2*time.Minute, s.IdleTimeout+s.EarlyDelay+s.LateDelay+2*time.Minute)
	default: // the night: the source goes idle, windows close and expire
		return g.between(s.Size(), s.Size()+s.AllowedLateness+s.OutOfOrderness+s.IdleTimeout)
	}
}

// eventTime picks an order's event time relative to its arrival; half of
// them on the same 15 s grid as the gaps, so event times also meet window
// ends and watermarks exactly.
func (g gen) eventTime(now, origin time.Time) time.Time {
	t := g.rawEventTime(now)
	if g.r.IntN(2) == 0 {
		t = origin.Add(t.Sub(origin).Truncate(15 * time.Second))
	}
	return t
}

func (g gen) rawEventTime(now time.Time) time.Time {
	s := g.spec
	d := max(s.OutOfOrderness, 30*time.Second)
	switch p := g.r.IntN(100); {
	case p < 45: // the usual few seconds or minutes in transit
		return now.Add(-g.between(0, d))
	case p < 60: // the customer on the metro
		return now.Add(-g.between(d, s.Size()+d))
	case p < 75: // late, often within the allowed lateness
		return now.Add(-g.between(s.Size(), s.Size()+s.AllowedLateness+d))
	case p < 85: // mostly too late
		return now.Add(-g.between(s.Size()+s.AllowedLateness, 2*(s.Size()+s.AllowedLateness+d)))
	case p < 92: // a device whose clock runs ahead
		return now.Add(g.between(time.Nanosecond, 2*d+5*time.Minute))
	default: // exactly on a window boundary, or the last instant before one
		t := g.spec.WindowOf(now.Add(-g.between(0, s.Size()+s.AllowedLateness))).Start
		if g.r.IntN(2) == 0 {
			t = t.Add(-time.Nanosecond)
		}
		return t
	}
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
