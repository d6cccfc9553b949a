package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-envconfig"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/logging"
)

// serverDriver plays the story against a running local server over HTTP,
// as `alpipe push` and `alpipe tick` do: the clock is moved, then the order
// is pushed to AggregateOrders or AdvanceWatermark is called.
type serverDriver struct{ url string }

func (d serverDriver) order(ctx context.Context, s step) error {
	if err := local.SetClock(ctx, d.url, s.At); err != nil {
		return err
	}
	res, err := local.Push(ctx, d.url, local.Step{Arrival: s.At, EventTime: s.EventTime.Format(time.RFC3339), Order: s.body()}, s.At)
	if err != nil {
		return err
	}
	if len(res.Result.Aggregations) != 1 || res.Result.Aggregations[0].Fate != "accepted" {
		return fmt.Errorf("order %s: %+v, want accepted", s.PedidoID, res.Result)
	}
	return nil
}

func (d serverDriver) tick(ctx context.Context, now time.Time) error {
	if err := local.SetClock(ctx, d.url, now); err != nil {
		return err
	}
	_, err := local.Tick(ctx, d.url)
	return err
}

// page is what the browser shows, read from the rendered DOM.
type page struct {
	Hours     []string   // hour labels under the chart's groups
	Bars      []pageBar  // the chart's bars, left to right
	Rows      [][]string // the figures table, as rendered text
	Watermark string
	Files     [][]string
	Errors    string
}

type pageBar struct {
	// Start, not Window: chromedriver fails to return an object with a
	// "Window" key ("Right-hand side of 'instanceof' is not an object").
	Start, Pais, Timing, Class string
	Height                     float64 // drawn height, px
	Title                      string
}

const readPage = `
const text = (e) => (e ? e.textContent.trim() : "");
const cells = (sel) => [...document.querySelectorAll(sel + " tbody tr")].map((tr) => [...tr.cells].map((td) => td.innerText.trim()));
return {
  Hours: [...document.querySelectorAll("#chart text.hour")].map(text),
  Bars: [...document.querySelectorAll("#chart g.bar")].map((g) => ({
    Start: g.getAttribute("data-window"),
    Pais: text(g.querySelector("text.pais")),
    Timing: text(g.querySelector("text.timing")),
    Class: g.querySelector("rect").getAttribute("class"),
    Height: g.querySelector("rect").getBoundingClientRect().height,
    Title: text(g.querySelector("title")),
  })),
  Rows: cells("#bars"),
  Watermark: document.getElementById("watermark").innerText.trim(),
  Files: cells("#files"),
  Errors: document.getElementById("errors").hidden ? "" : document.getElementById("errors").innerText.trim(),
};`

// The local server cannot be stopped (the functions framework offers no
// way), so it is started once per test binary, and only by a test that
// needs it.
var localServer struct {
	srv    *local.Server
	data   string
	err    error
	played bool // the story ran: its orders and file are in the server for good
}

func TestMain(m *testing.M) {
	code := m.Run()
	if localServer.srv != nil {
		_ = localServer.srv.App.Close()
		_ = os.RemoveAll(localServer.data)
	}
	os.Exit(code)
}

func startLocal(t *testing.T) (*local.Server, string) {
	t.Helper()
	if localServer.srv == nil && localServer.err == nil {
		localServer.data, localServer.err = os.MkdirTemp("", "alpipe-dashboard-test-")
		if localServer.err == nil {
			localServer.srv, localServer.err = local.Start(context.Background(), local.Options{
				Addr: "127.0.0.1:0", DataDir: localServer.data, Logger: logging.Discard(),
				Clock: local.VirtualClock(at("17:00")),
			})
		}
	}
	if localServer.err != nil {
		t.Fatalf("start local server: %v", localServer.err)
	}
	return localServer.srv, localServer.data
}

// dashboardURL is the local server itself once serve mounts the dashboard
// at "/"; until then the test serves Handler beside it, over the server's
// own warehouse, ledger and state store.
func dashboardURL(t *testing.T, srv *local.Server, data string) string {
	t.Helper()
	resp, err := http.Get(srv.URL + dashboard.APIPath)
	if err == nil {
		var snap dashboard.Snapshot
		mounted := resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&snap) == nil && snap.Aggregation != ""
		resp.Body.Close()
		if mounted {
			t.Logf("serve mounts the dashboard: testing %s/", srv.URL)
			return srv.URL
		}
	}
	// The same settings local.Start gives the functions, so that App.Store
	// returns the store it already opened (the embedded file is locked).
	env := map[string]string{
		"ALPIPE_DATA_DIR": data, "STATE_STORE": config.Embedded, "WAREHOUSE": config.DuckDB,
		"QUARANTINE_BUCKET": local.QuarantineBucket, "STAGING_BUCKET": local.StagingBucket,
	}
	var cfg config.Watermark
	if err := config.Load(context.Background(), &cfg, envconfig.MultiLookuper(envconfig.MapLookuper(env), envconfig.OsLookuper())); err != nil {
		t.Fatal(err)
	}
	store, err := srv.App.Store(context.Background(), cfg.Backends)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(dashboard.Handler(dashboard.Source{
		Warehouse:  srv.App.Querier(),
		Ledger:     srv.App.Ledger(),
		Watermarks: dashboard.StoreWatermarks{Store: store},
		Now:        srv.Clock.Now,
		Refresh:    250 * time.Millisecond,
	}))
	t.Cleanup(ts.Close)
	t.Logf("serve does not mount the dashboard yet: testing Handler at %s/ over the local server's backends", ts.URL)
	return ts.URL
}

// waitFor reads the page until want(page) holds or the time is up; the
// page must get there by its own refreshes.
func waitFor(t *testing.T, wd *webDriver, limit time.Duration, what string, ok func(page) string) page {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var p page
		err := wd.execute(readPage, &p)
		why := ""
		if err != nil {
			why = err.Error()
		} else {
			why = ok(p)
		}
		if why == "" {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the page does not show %s: %s", limit, what, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDashboardInChromium drops a file and publishes orders through the
// local server's functions, opens the page in headless Chromium, and checks
// what it shows; then plays more of the story with the page left open and
// checks that it caught up by itself.
func TestDashboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: starts the local server and headless Chromium")
	}
	chromium, driver, why := browserBinaries()
	if why != "" {
		t.Skip(why)
	}
	if localServer.played {
		t.Skip("the story already ran in this process (-count > 1) and the local server cannot be reset: its orders and file are deduplicated now")
	}
	ctx := context.Background()
	started := time.Now()
	srv, data := startLocal(t)
	localServer.played = true
	url := dashboardURL(t, srv, data)

	rec, err := local.Drop(ctx, srv.URL, "exportaciones/2026/03/14/pedidos-erp.csv", "../../testdata/exportaciones/2026/03/14/pedidos-erp.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != ledger.Done || rec.Counts.Loaded != 1 || rec.Counts.Quarantined != 3 {
		t.Fatalf("drop: %+v, want DONE with 1 loaded and 3 quarantined", rec)
	}
	d := serverDriver{url: srv.URL}
	if err := play(ctx, d, act1); err != nil {
		t.Fatal(err)
	}
	setup := time.Since(started)

	browserStart := time.Now()
	wd := startBrowser(t, chromium, driver)
	t.Logf("chromedriver and Chromium ready in %s", time.Since(browserStart).Round(time.Millisecond))
	if err := wd.navigate(url + "/"); err != nil {
		t.Fatal(err)
	}
	fileRow := []string{rec.Key.String(), "DONE", "lineas_pedido", "4", "1", "3", rec.FinishedAt.UTC().Format("2006-01-02 15:04:05"), rejects(rec.Counts.Rejects)}
	loaded := time.Now()
	first := waitFor(t, wd, 15*time.Second, "act 1", func(p page) string {
		return diffPage(p, wantAct1, "W = 2026-03-14 17:15:00 UTC, lag 10m 0s behind processing time 2026-03-14 17:25:00 UTC", fileRow)
	})
	t.Logf("page showed act 1 %s after navigation", time.Since(loaded).Round(time.Millisecond))
	for _, b := range first.Bars {
		if b.Height < 2 {
			t.Errorf("bar %s %s is %.1f px high: not visible", b.Start, b.Pais, b.Height)
		}
	}

	if err := play(ctx, d, act2); err != nil {
		t.Fatal(err)
	}
	played := time.Now()
	final := waitFor(t, wd, 20*time.Second, "act 2 without a reload", func(p page) string {
		return diffPage(p, wantAct2, "W = 2026-03-14 18:00:00 UTC, lag 22m 0s behind processing time 2026-03-14 18:22:00 UTC", fileRow)
	})
	t.Logf("page refreshed itself to act 2 %s after the last tick", time.Since(played).Round(time.Millisecond))

	// Bars scale with the exact amounts: ES 17:00 (100.10) is the tallest,
	// FR 18:00 (20.00) a fifth of it, give or take a pixel.
	h := map[string]float64{}
	for _, b := range final.Bars {
		h[b.Start[11:16]+" "+b.Pais] = b.Height
	}
	if r := h["18:00 FR"] / h["17:00 ES"]; r < 0.18 || r > 0.22 {
		t.Errorf("FR/ES bar heights %.1f/%.1f = %.3f, want about 20.00/100.10", h["18:00 FR"], h["17:00 ES"], r)
	}
	if !strings.Contains(final.Bars[1].Title, "60.05 €") || !strings.Contains(final.Bars[1].Title, "LATE (pane 2)") {
		t.Errorf("PT 17:00 tooltip = %q", final.Bars[1].Title)
	}
	if shot := os.Getenv("DASHBOARD_SCREENSHOT"); shot != "" {
		if err := wd.screenshot(shot); err != nil {
			t.Error(err)
		}
	}
	t.Logf("timing: server, drop and act 1 %s; whole test %s", setup.Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
}

// diffPage says how p differs from a page showing bars, the watermark line
// and the one file, or "" if it does not.
func diffPage(p page, bars []dashboard.Bar, watermark string, file []string) string {
	var wantHours []string
	var wantBars []pageBar
	var wantRows [][]string
	for _, b := range bars {
		hour := b.WindowStart.Format("15:04")
		if !slices.Contains(wantHours, hour) {
			wantHours = append(wantHours, hour)
		}
		wantBars = append(wantBars, pageBar{Start: b.WindowStart.Format(time.RFC3339), Pais: b.Pais, Timing: b.Timing, Class: "t-" + b.Timing})
		wantRows = append(wantRows, []string{
			b.WindowStart.Format("2 Jan 15:04") + "–" + b.WindowEnd.Format("15:04"), b.Pais, money(b.Importe.String()),
			fmt.Sprint(b.Pedidos), fmt.Sprint(b.Unidades), b.Timing, fmt.Sprint(b.PaneIndex),
		})
	}
	gotBars := make([]pageBar, len(p.Bars))
	for i, b := range p.Bars {
		gotBars[i] = pageBar{Start: b.Start, Pais: b.Pais, Timing: b.Timing, Class: b.Class}
	}
	want := page{Hours: wantHours, Bars: wantBars, Rows: wantRows, Watermark: watermark, Files: [][]string{file}}
	got := page{Hours: p.Hours, Bars: gotBars, Rows: p.Rows, Watermark: p.Watermark, Files: p.Files, Errors: p.Errors}
	if diff := cmp.Diff(want, got); diff != "" {
		return "(-want +got)\n" + diff
	}
	return ""
}

// money is how the page writes an amount: the exact decimal, at least two
// decimals, and the euro sign.
func money(s string) string {
	i, f, _ := strings.Cut(s, ".")
	for len(f) < 2 {
		f += "0"
	}
	return i + "." + f + " €"
}

func rejects(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, "; ")
}
