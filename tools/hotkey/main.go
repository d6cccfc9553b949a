// Command hotkey is the load generator of scripts/hotkey.sh: it serves the
// BigQuery fake for the production binary (hotkey bqfake), and pushes orders
// of one hot customer to a running AggregateOrders as Pub/Sub push would,
// retrying every non-2xx, then ticks AdvanceWatermark until every order is
// counted exactly once in every shipped aggregation (hotkey load); any other
// count fails the run. It prints orders acknowledged per second, and orders
// counted per second, timed until the panes hold every order.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/internal/window"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: hotkey bqfake|load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "bqfake":
		err = serveFake(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hotkey:", err)
		os.Exit(1)
	}
}

// serveFake serves bqfake on a free port and writes host:port to a file.
func serveFake(args []string) error {
	fs := flag.NewFlagSet("bqfake", flag.ExitOnError)
	project := fs.String("project", "", "project")
	dataset := fs.String("dataset", "alpinashop_analitica", "dataset")
	addrFile := fs.String("addr-file", "", "file to write host:port to")
	fs.Parse(args)
	f, err := bqfake.New(bqfake.Options{Project: *project, Dataset: *dataset})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*addrFile, []byte(l.Addr().String()), 0o644); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, os.Kill)
	defer stop()
	srv := &http.Server{Handler: f.Handler()}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

var thirty = []string{"ES", "FR", "PT", "DE", "IT", "NL", "BE", "AT", "CH", "IE", "GB", "PL", "SE", "DK", "NO",
	"FI", "CZ", "SK", "HU", "RO", "BG", "GR", "HR", "SI", "LU", "EE", "LV", "LT", "MT", "CY"}

func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	ordersURL := fs.String("orders", "", "AggregateOrders URL")
	tickURL := fs.String("tick", "", "AdvanceWatermark URL (empty: no tick)")
	clockFile := fs.String("clock", "", "the server's ALPIPE_CLOCK_FILE")
	n := fs.Int("n", 2000, "orders")
	inflight := fs.Int("inflight", 200, "requests in flight")
	keys := fs.String("keys", "ES", `comma-separated countries, or "uniform30"`)
	run := fs.String("run", "run", "prefix of the pedido_ids, unique per run")
	label := fs.String("label", "", "what to call this run in the output")
	fs.Parse(args)
	if *tickURL != "" && *clockFile == "" {
		return errors.New("load: -tick needs -clock (the tick moves the server's clock past the EARLY delay)")
	}
	countries := strings.Split(*keys, ",")
	if *keys == "uniform30" {
		countries = thirty
	}
	// Processing time: 30 minutes into an hour, the events five minutes
	// before, so every order falls into one window per key.
	now := time.Date(2026, 3, 14, 18, 30, 0, 0, time.UTC)
	if *clockFile != "" {
		if err := clock.Set(*clockFile, now); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: *inflight + 10, MaxConnsPerHost: *inflight + 10}}

	var (
		mu        sync.Mutex
		batches   = map[string]stream.BatchInfo{}
		latencies []time.Duration
		retries   atomic.Int64
		next      atomic.Int64
		wg        sync.WaitGroup
		firstErr  error
	)
	want := map[string]int64{}
	for i := range *n {
		want[countries[i%len(countries)]]++
	}
	start := time.Now()
	for range *inflight {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= *n {
					return
				}
				key := countries[i%len(countries)]
				id := fmt.Sprintf("%s-%06d", *run, i)
				body := pushBody(id, key, now.Add(-5*time.Minute))
				backoff := 10 * time.Millisecond
				for attempt := 0; ; attempt++ {
					t0 := time.Now()
					res, code, err := post(client, *ordersURL, body)
					if err == nil && code/100 == 2 {
						mu.Lock()
						latencies = append(latencies, time.Since(t0))
						var r stream.Result
						if json.Unmarshal(res, &r) == nil && r.Batch.ID != "" {
							batches[r.Batch.ID] = r.Batch
						}
						mu.Unlock()
						break
					}
					retries.Add(1)
					if attempt > 200 {
						mu.Lock()
						if firstErr == nil {
							firstErr = fmt.Errorf("order %s: gave up after %d attempts: %d %v %.200s", id, attempt, code, err, res)
						}
						mu.Unlock()
						return
					}
					time.Sleep(backoff) // Pub/Sub's push backoff, compressed
					backoff = min(2*backoff, time.Second)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return firstErr
	}
	txs, attempts, delivered := 0, 0, 0
	for _, b := range batches {
		txs, attempts, delivered = txs+b.Transactions, attempts+b.Attempts, delivered+b.Deliveries
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	fmt.Printf("%s: acknowledged: %d orders over %d key(s), %d in flight: %.2fs, %.0f orders/s, %d retried requests; %d batches (%.1f deliveries each), %d order transactions (%.4f per order), %d attempts; push latency p50 %s p99 %s\n",
		*label, *n, len(countries), *inflight, elapsed.Seconds(), float64(*n)/elapsed.Seconds(), retries.Load(),
		len(batches), float64(delivered)/float64(max(1, len(batches))), txs, float64(txs)/float64(*n), attempts,
		pct(0.50).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond))

	if *tickURL == "" {
		return nil
	}
	// Two minutes later: past the EARLY delay, before the window's end.
	later := now.Add(2 * time.Minute)
	if err := clock.Set(*clockFile, later); err != nil {
		return err
	}
	// An order is done for the business when it is in its panes, so the
	// run is counted until the panes of every aggregation hold every
	// order: ticks until they do (one, unless a tick was busy or failed).
	held := map[string]window.Pane{} // the newest pane per (aggregation, window, key)
	var ticks []string
	for attempt := 0; ; attempt++ {
		t0 := time.Now()
		res, code, err := post(client, *tickURL, []byte(`{}`))
		took := time.Since(t0)
		if err == nil && code == http.StatusOK {
			var tr stream.TickResult
			if err := json.Unmarshal(res, &tr); err != nil {
				return fmt.Errorf("tick answer: %w", err)
			}
			ticks = append(ticks, fmt.Sprintf("%.2fs", took.Seconds()))
			for _, a := range tr.Aggregations {
				for _, p := range a.Panes {
					id := a.Aggregation + "|" + p.WindowStart.String() + "|" + p.Key
					if q, ok := held[id]; !ok || p.Index > q.Index {
						held[id] = p
					}
				}
			}
			if len(miscounted(slices.Collect(maps.Values(held)), want, *n)) == 0 {
				break
			}
		}
		if attempt >= 10 {
			if err == nil && code == http.StatusOK {
				break // miscounted says what is missing
			}
			return fmt.Errorf("tick: %d %v %.300s", code, err, res)
		}
		time.Sleep(time.Second)
	}
	counted := time.Since(start)
	fmt.Printf("%s: counted: every order in its panes of every aggregation after %.2fs (acknowledged %.2fs + %d tick(s) %s): %.0f orders/s\n",
		*label, counted.Seconds(), elapsed.Seconds(), len(ticks), strings.Join(ticks, ", "), float64(*n)/counted.Seconds())
	if problems := miscounted(slices.Collect(maps.Values(held)), want, *n); len(problems) > 0 {
		return fmt.Errorf("%s: orders not counted exactly once:\n  %s", *label, strings.Join(problems, "\n  "))
	}
	fmt.Printf("%s: every order counted exactly once in all three aggregations: none lost, none counted twice\n", *label)
	return nil
}

// What each aggregation must hold after the tick: ventas_hora_pais one pane
// per country with its orders; ventas_sku_hora_movil, every order being one
// line of hotSKU, one pane with every order per sliding window of the event
// time (1 h every 15 min: four); sesiones_cliente, every order in the live
// sessions of hotCustomer (MERGED panes left out: their orders moved on).
const (
	aggPais, aggSKU, aggSessions = "ventas_hora_pais", "ventas_sku_hora_movil", "sesiones_cliente"
	hotSKU, hotCustomer          = "MOCH-40L-AZ", "C-1"
	skuWindows                   = 4
)

// miscounted says how panes differ from every order counted once.
func miscounted(panes []window.Pane, want map[string]int64, n int) []string {
	var problems []string
	problem := func(format string, a ...any) {
		problems = append(problems, fmt.Sprintf(format, a...))
	}
	got := map[string]int64{}         // aggPais's orders by key
	byWindow := map[time.Time]int64{} // aggSKU's orders by window
	var inSessions int64
	for _, p := range panes {
		switch {
		case p.Aggregation == aggPais:
			got[p.Key] += p.Measures.Pedidos
		case p.Aggregation == aggSKU && p.Key != hotSKU:
			problem("%s: pane of key %s, want only %s", aggSKU, p.Key, hotSKU)
		case p.Aggregation == aggSKU:
			byWindow[p.WindowStart] += p.Measures.Pedidos
		case p.Aggregation == aggSessions && p.Key != hotCustomer:
			problem("%s: pane of key %s, want only %s", aggSessions, p.Key, hotCustomer)
		case p.Aggregation == aggSessions && p.Timing != window.TimingMerged:
			inSessions += p.Measures.Pedidos
		}
	}
	for k, w := range want {
		if got[k] != w {
			problem("%s: key %s: panes hold %d orders, want %d", aggPais, k, got[k], w)
		}
	}
	if len(got) != len(want) {
		problem("%s: panes over %d keys, want %d", aggPais, len(got), len(want))
	}
	for w, got := range byWindow {
		if got != int64(n) {
			problem("%s: window %s: panes hold %d orders, want %d", aggSKU, w.Format("15:04"), got, n)
		}
	}
	if len(byWindow) != skuWindows {
		problem("%s: panes of %d windows, want %d", aggSKU, len(byWindow), skuWindows)
	}
	if inSessions != int64(n) {
		problem("%s: live sessions hold %d orders, want %d", aggSessions, inSessions, n)
	}
	return problems
}

func pushBody(id, key string, event time.Time) []byte {
	data := `{"pedido_id":"` + id + `","cliente_id":"` + hotCustomer + `","pais":"` + key +
		`","importe_total":"179.80","lineas":[{"sku":"MOCH-40L-AZ","cantidad":2,"precio_unitario":"89.90"}]}`
	b, _ := json.Marshal(order.Delivery{
		Message: order.Message{
			Data:        []byte(data), // base64 in JSON
			Attributes:  map[string]string{order.EventTimeAttribute: event.Format(time.RFC3339Nano)},
			MessageID:   "m-" + id,
			PublishTime: event,
		},
		Subscription: "projects/p/subscriptions/pedidos-nuevos-push",
	})
	return b
}

func post(c *http.Client, url string, body []byte) ([]byte, int, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}
