package streamtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/internal/window/windowtest"
)

// testOrdersDuringTicks sends orders from several goroutines while two
// tickers (leases out of the way) run on a shared clock, so that orders race
// the watermark, late corrections the ticks' panes and expiry the orders
// into the expiring window. No model can say which pane fires when, so it
// checks what must hold anyway: every order has one fate, panes are well
// formed, drops are exactly the too-late orders, and once everything expired
// the view equals the accepted sums (per key for sessions, whose orders of
// the four senders merge).
func testOrdersDuringTicks(t *testing.T, en env, f Features) {
	type run struct {
		name    string
		session bool
		ld      time.Duration
	}
	runs := []run{{"Ld=1m0s", false, time.Minute}, {"Ld=2m0s", false, 2 * time.Minute}, {"sessions/Ld=1m0s", true, time.Minute}}
	for _, rn := range runs {
		t.Run(rn.name, func(t *testing.T) {
			spec := window.Defaults()
			spec.WindowSize, spec.OutOfOrderness, spec.IdleTimeout = time.Minute, 0, 30*time.Second
			spec.EarlyDelay, spec.AllowedLateness, spec.LateDelay = 0, time.Minute, rn.ld
			if rn.session {
				spec.Name, spec.WindowSize, spec.Gap = "sesiones_pais", 0, time.Minute
			}
			r := newRig(t, en, spec)
			r.store.IgnoreLeases(true)
			start := at("18:00")
			var clock atomic.Int64 // processing time, in seconds after start
			now := func() time.Time { return start.Add(time.Duration(clock.Load()) * time.Second) }

			const senders = 4
			perSender := max(1, f.ChaosOrders/senders)
			var (
				mu       sync.Mutex
				accepted = map[window.WindowKey]window.Measures{}
				tooLate  = map[string]bool{}
				errs     []error
				senderWG sync.WaitGroup
				tickWG   sync.WaitGroup
				done     = make(chan struct{})
			)
			fail := func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
			for s := range senders {
				senderWG.Go(func() {
					rnd := rand.New(rand.NewPCG(uint64(s), 0xc4a05))
					for i := range perSender {
						n := start.Add(time.Duration(clock.Add(1)) * time.Second)
						key, et := Countries[rnd.IntN(3)], n.Add(-time.Duration(rnd.IntN(200))*time.Second)
						m := window.Measures{Importe: numeric.FromNanos(rnd.Int64N(1e12) + 1), Pedidos: 1, Unidades: 1}
						e := windowtest.MultiEvent{Kind: windowtest.Deliver, Now: n, MessageID: fmt.Sprintf("c-%d-%d", s, i),
							Order: windowtest.SimpleOrder(fmt.Sprintf("P-c%d-%04d", s, i), key, et, m)}
						res, err := r.p.Handle(t.Context(), Delivery(e), n)
						if err != nil {
							fail(fmt.Errorf("order %s: %w", e.Order.PedidoID, err))
							return
						}
						wk := window.WindowKey{Window: spec.WindowOf(et), Key: key}
						if spec.Session() {
							wk.Window = window.Window{} // a session's extent is known once it expired
						}
						mu.Lock()
						switch res.Fate() {
						case stream.Accepted:
							sum, err := accepted[wk].Add(m)
							if err != nil {
								errs = append(errs, err)
							}
							accepted[wk] = sum
						case stream.TooLate:
							tooLate[e.Order.PedidoID] = true
						default:
							errs = append(errs, fmt.Errorf("order %s: fate %s", e.Order.PedidoID, res.Fate()))
						}
						mu.Unlock()
					}
				})
			}
			for range 2 {
				tickWG.Go(func() {
					for {
						select {
						case <-done:
							return
						default:
						}
						clock.Add(7)
						if _, err := r.p.Tick(t.Context(), now()); err != nil {
							if contended(err) { // as in production: the next tick continues
								t.Logf("tick aborted by contention, next tick continues: %v", err)
								continue
							}
							fail(fmt.Errorf("tick: %w", err))
							return
						}
					}
				})
			}
			senderWG.Wait()
			close(done)
			tickWG.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			r.store.IgnoreLeases(false)
			if err := tickUntilDone(t, r.p, now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}

			panes, err := r.sink.PanesOf(spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := windowtest.CheckSequences(spec, panes); err != nil {
				t.Error(err)
			}
			view, err := windowtest.View(panes)
			if err != nil {
				t.Fatal(err)
			}
			if spec.Session() {
				if view, err = byKey(view); err != nil {
					t.Fatal(err)
				}
			}
			if diff := gocmp.Diff(accepted, view); diff != "" {
				t.Errorf("view differs from the sums of the accepted orders (-want +got):\n%s", diff)
			}
			got := map[string]bool{}
			for _, d := range r.drops(spec.Name) {
				got[d.PedidoID] = true
				if end := d.WindowStart.Add(spec.Size() + spec.AllowedLateness); d.Watermark.Before(end) {
					t.Errorf("order %s dropped at W %s < end + L %s", d.PedidoID, d.Watermark, end)
				}
			}
			if diff := gocmp.Diff(tooLate, got); diff != "" {
				t.Errorf("drops (-too-late results +rows):\n%s", diff)
			}
			if n := r.open(spec.Name); n != 0 {
				t.Errorf("%d windows left open", n)
			}
			r.clean()
			t.Logf("%d orders: %d windows, %d panes, %d too late; clock at %s", senders*perSender, len(accepted), len(panes), len(tooLate), now().Format(time.TimeOnly))
		})
	}
}

func byKey(view map[window.WindowKey]window.Measures) (map[window.WindowKey]window.Measures, error) {
	out := map[window.WindowKey]window.Measures{}
	for wk, m := range view {
		k := window.WindowKey{Key: wk.Key}
		sum, err := out[k].Add(m)
		if err != nil {
			return nil, err
		}
		out[k] = sum
	}
	return out, nil
}

// contended reports a transaction aborted by lock contention (the Firestore
// emulator times contended locks out): a retry helps.
func contended(err error) bool {
	return status.Code(errors.Unwrap(err)) == codes.Aborted || strings.Contains(err.Error(), "code = Aborted")
}

// tickUntilDone retries a contended tick at most five times, as the
// scheduler would.
func tickUntilDone(t *testing.T, p *stream.Processor, now time.Time) error {
	var err error
	for range 5 {
		if _, err = p.Tick(t.Context(), now); err == nil || !contended(err) {
			return err
		}
		t.Logf("final tick aborted by contention, retrying: %v", err)
	}
	return err
}
