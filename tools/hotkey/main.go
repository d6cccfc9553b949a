// Command hotkey is the load generator of scripts/hotkey.sh: it serves the
// BigQuery fake for the production binary (hotkey bqfake), and pushes orders
// to a running AggregateOrders as Pub/Sub push would, retrying every non-2xx,
// then ticks AdvanceWatermark and checks that every order is counted exactly
// once in both aggregations, ventas_hora_pais and ventas_sku_hora_movil
// (hotkey load); any other count fails the run.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alpinashop/alpipe/internal/order"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
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
	countries := strings.Split(*keys, ",")
	if *keys == "uniform30" {
		countries = thirty
	}
	// Processing time: 30 minutes into an hour, the events five minutes
	// before, so every order falls into one window per key.
	now := time.Date(2026, 3, 14, 18, 30, 0, 0, time.UTC)
	if *clockFile != "" {
		if err := os.WriteFile(*clockFile, []byte(now.Format(time.RFC3339Nano)), 0o644); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: *inflight + 10, MaxConnsPerHost: *inflight + 10}}

	type batchSeen struct{ deliveries, txs, attempts int }
	var (
		mu        sync.Mutex
		batches   = map[string]batchSeen{}
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
							batches[r.Batch.ID] = batchSeen{r.Batch.Deliveries, r.Batch.Transactions, r.Batch.Attempts}
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
		txs, attempts, delivered = txs+b.txs, attempts+b.attempts, delivered+b.deliveries
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	fmt.Printf("%s: %d orders over %d key(s), %d in flight: %.1fs, %.0f orders/s, %d retried requests; %d batches (%.1f deliveries each), %d order transactions (%.4f per order), %d attempts; push latency p50 %s p99 %s\n",
		*label, *n, len(countries), *inflight, elapsed.Seconds(), float64(*n)/elapsed.Seconds(), retries.Load(),
		len(batches), float64(delivered)/float64(max(1, len(batches))), txs, float64(txs)/float64(*n), attempts,
		pct(0.50).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond))

	if *tickURL == "" {
		return nil
	}
	// Two minutes later: past the EARLY delay, before the window's end.
	later := now.Add(2 * time.Minute)
	if err := os.WriteFile(*clockFile, []byte(later.Format(time.RFC3339Nano)), 0o644); err != nil {
		return err
	}
	var tr stream.TickResult
	for attempt := 0; ; attempt++ {
		res, code, err := post(client, *tickURL, []byte(`{}`))
		if err == nil && code == http.StatusOK {
			if err := json.Unmarshal(res, &tr); err != nil {
				return fmt.Errorf("tick answer: %w", err)
			}
			break
		}
		if attempt > 10 {
			return fmt.Errorf("tick: %d %v %.300s", code, err, res)
		}
		time.Sleep(time.Second)
	}
	return checkPanes(*label, tr, want, *n)
}

// The aggregations the production binary runs (every declared one) and
// what each must hold after the tick: ventas_hora_pais one pane per
// country with its orders; ventas_sku_hora_movil, every order being one
// line of hotSKU, one pane per sliding window of the event time (four)
// with every order.
const (
	aggPais = "ventas_hora_pais"
	aggSKU  = "ventas_sku_hora_movil"
	hotSKU  = "MOCH-40L-AZ"
	// skuWindows is the windows of one event time in aggSKU: 1 h every 15 min.
	skuWindows = 4
)

// checkPanes fails unless every order is counted exactly once in each
// aggregation: per country in aggPais, in each of its windows in aggSKU.
func checkPanes(label string, tr stream.TickResult, want map[string]int64, n int) error {
	var problems []string
	seen := map[string]bool{}
	for _, a := range tr.Aggregations {
		seen[a.Aggregation] = true
		switch a.Aggregation {
		case aggPais:
			got := map[string]int64{}
			var total int64
			for _, p := range a.Panes {
				got[p.Key] += p.Measures.Pedidos
				total += p.Measures.Pedidos
			}
			for k, w := range want {
				if got[k] != w {
					problems = append(problems, fmt.Sprintf("%s: key %s: panes hold %d orders, want %d", a.Aggregation, k, got[k], w))
				}
			}
			if len(got) != len(want) {
				problems = append(problems, fmt.Sprintf("%s: panes over %d keys, want %d", a.Aggregation, len(got), len(want)))
			}
			fmt.Printf("%s: %s: tick emitted %d pane(s) holding %d orders (%d per key as sent)\n", label, a.Aggregation, len(a.Panes), total, want[firstKey(want)])
		case aggSKU:
			byWindow := map[time.Time]int64{}
			for _, p := range a.Panes {
				if p.Key != hotSKU {
					problems = append(problems, fmt.Sprintf("%s: pane of key %s, want only %s", a.Aggregation, p.Key, hotSKU))
					continue
				}
				byWindow[p.WindowStart] += p.Measures.Pedidos
			}
			for w, got := range byWindow {
				if got != int64(n) {
					problems = append(problems, fmt.Sprintf("%s: window %s: panes hold %d orders, want %d", a.Aggregation, w.Format("15:04"), got, n))
				}
			}
			if len(byWindow) != skuWindows {
				problems = append(problems, fmt.Sprintf("%s: panes of %d windows, want %d", a.Aggregation, len(byWindow), skuWindows))
			}
			fmt.Printf("%s: %s: tick emitted %d pane(s), one per window of the event time, each holding %d orders of %s\n", label, a.Aggregation, len(a.Panes), n, hotSKU)
		}
	}
	for _, name := range []string{aggPais, aggSKU} {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("the tick ran no aggregation %s: both must be on", name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: orders not counted exactly once:\n  %s", label, strings.Join(problems, "\n  "))
	}
	fmt.Printf("%s: every order counted exactly once in both aggregations: none lost, none counted twice\n", label)
	return nil
}

func firstKey(m map[string]int64) string {
	for k := range m {
		return k
	}
	return ""
}

func pushBody(id, key string, event time.Time) []byte {
	data := `{"pedido_id":"` + id + `","cliente_id":"C-1","pais":"` + key +
		`","importe_total":"179.80","lineas":[{"sku":"MOCH-40L-AZ","cantidad":2,"precio_unitario":"89.90"}]}`
	b, _ := json.Marshal(map[string]any{
		"message": map[string]any{
			"data":        base64.StdEncoding.EncodeToString([]byte(data)),
			"attributes":  map[string]string{order.EventTimeAttribute: event.Format(time.RFC3339Nano)},
			"messageId":   "m-" + id,
			"publishTime": event.Format(time.RFC3339Nano),
		},
		"subscription": "projects/p/subscriptions/pedidos-nuevos-push",
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
