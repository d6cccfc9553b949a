package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
	"github.com/alpinashop/alpipe/test/browsertest"
)

// serverDriver plays the story against a running local server over HTTP,
// as `alpipe push` and `alpipe tick` do: the clock is moved, then the order
// is pushed to AggregateOrders or AdvanceWatermark is called.
type serverDriver struct{ client.Server }

func (d serverDriver) order(ctx context.Context, s step) error {
	res, err := d.pushAt(ctx, s)
	if err != nil {
		return err
	}
	if fate(res) != "accepted" {
		return fmt.Errorf("order %s: %+v, want accepted", s.PedidoID, res)
	}
	return nil
}

// pushAt moves the server's clock to s.At and pushes s's order.
func (d serverDriver) pushAt(ctx context.Context, s step) (stream.Result, error) {
	if _, err := d.SetClock(ctx, s.At); err != nil {
		return stream.Result{}, err
	}
	return d.Push(ctx, client.Step{Arrival: s.At, EventTime: s.EventTime.Format(time.RFC3339), Order: s.body()}, s.At)
}

// fate is what the dashboard's aggregation did with an order (the other
// declared aggregations have their own).
func fate(r stream.Result) string {
	for _, a := range r.Aggregations {
		if a.Aggregation == dashboard.DefaultAggregation {
			return string(a.Fate)
		}
	}
	return ""
}

func (d serverDriver) tick(ctx context.Context, now time.Time) error {
	if _, err := d.SetClock(ctx, now); err != nil {
		return err
	}
	_, err := d.Tick(ctx)
	return err
}

// page is what the browser shows, read from the rendered DOM.
type page struct {
	Text      string     // the page's visible text
	Picker    string     // the key control's tag and type: "SELECT" or "INPUT text"
	Hours     []string   // hour labels on the live panel's time axis
	Bars      []pageBar  // the live panel's bars, left to right
	Rows      [][]string // the figures table, as rendered text
	Watermark string
	Files     [][]string
	Errors    string
	Status    string
	Cards     map[string]string                    // card id -> its text, lines joined by " | "
	Timeline  []pageBar                            // the all-windows chart's bars
	Points    []struct{ Start, End, Total string } // the all-windows chart's points (sliding windows)
	TimelineW float64                              // x of its watermark marker, or -1
	ChartW    float64                              // x of the live panel's watermark marker, or -1
	YTicks    []string                             // y-axis labels of both charts
	Labels    []struct {
		Text       string
		X, Y, W, H float64
	} // every text of the charts but the empty-state and axis titles
	Dead      [][]string
	Late      [][]string
	Open      [][]string
	QLinks    []string // quarantine links, absolute
	BaseLines []int    // lines each file's base name takes
	Countries []string // the key picker's choices
	Selected  []string // the keys the picker shows chosen
	Note      string   // the filter's note ("showing ES, PT")
	Invalid   []string // ids of the filter controls marked invalid
	IDCells   []string // order id cells of the discards tables: "text lines white-space"
	TLLegend  string   // the all-windows chart's legend
	LiveLabel string   // the label of the band behind the all-windows chart
	Empty     []struct {
		Text            string
		Right, SVGRight float64
	} // the charts' empty-state messages
	URL       string
	Resources []string // every resource the page loaded
}

type pageBar struct {
	// Start, not Window: chromedriver fails to return an object with a
	// "Window" key ("Right-hand side of 'instanceof' is not an object").
	Start, Pais, Timing, Class, Importe string
	Height, W                           float64 // drawn size, px
	X                                   float64 // drawn left edge, px
	Title                               string
}

const readPage = `
const text = (e) => (e ? e.textContent.trim() : "");
const lines = (e) => e.innerText.trim().split("\n").map((s) => s.trim()).filter(Boolean).join(" | ");
const box = (e) => e.getBoundingClientRect();
// textContent, not innerText: the figures table sits in a closed <details>.
const cells = (sel) => [...document.querySelectorAll(sel + " tbody tr")].map((tr) => [...tr.cells].map((td) => td.textContent.replace(/\s+/g, " ").trim()));
const wmX = (sel) => { const l = document.querySelector(sel + " line.wm"); return l ? box(l).x : -1; };
const bar = (g, timing) => { const r = box(g.querySelector("rect")); return { Start: g.getAttribute("data-window"),
  Pais: g.getAttribute("data-key") || "", Importe: g.getAttribute("data-importe") || "", Timing: timing, Class: g.getAttribute("class"),
  Height: r.height, W: r.width, X: r.x, Title: text(g.querySelector("title")) }; };
const card = {};
for (const c of document.querySelectorAll(".card")) card[c.id] = lines(c.querySelector("dd"));
const picker = document.getElementById("f-key");
return {
  Text: document.body.innerText,
  Picker: picker.tagName + (picker.type === "text" ? " text" : ""),
  Hours: [...document.querySelectorAll("#chart text.hour")].map(text),
  Bars: [...document.querySelectorAll("#chart g.bar")].map((g) => ({ ...bar(g, text(g.querySelector("text.timing"))), Class: g.querySelector("rect").getAttribute("class") })),
  Timeline: [...document.querySelectorAll("#timeline g.tbar")].map((g) => bar(g, getComputedStyle(g.querySelector("rect")).fill)),
  Points: [...document.querySelectorAll("#timeline g.tpoint")].map((g) => ({ Start: g.getAttribute("data-window"), End: g.getAttribute("data-end"), Total: g.getAttribute("data-total") })),
  TimelineW: wmX("#timeline"),
  ChartW: wmX("#chart"),
  YTicks: [...document.querySelectorAll("svg text.ytick")].map(text),
  Labels: [...document.querySelectorAll("#chart text, #timeline text")].filter((t) => !t.classList.contains("empty") && !t.classList.contains("axis-title")).map((t) => {
    const r = box(t);
    return { Text: t.textContent, X: r.x, Y: r.y, W: r.width, H: r.height };
  }),
  Rows: cells("#bars"),
  Watermark: lines(document.getElementById("watermark")),
  Files: cells("#files"),
  Dead: cells("#dead"),
  Late: cells("#late"),
  Open: cells("#open"),
  QLinks: [...document.querySelectorAll("#files a.qlink")].map((a) => a.href),
  BaseLines: [...document.querySelectorAll("#files td.object .base")].map((s) => s.getClientRects().length),
  Countries: [...document.querySelectorAll("#f-key option")].map((o) => o.value).filter(Boolean),
  Selected: [...document.getElementById("f-key").selectedOptions].map((o) => o.value),
  Note: text(document.getElementById("f-note")),
  Invalid: [...document.querySelectorAll("#filters [aria-invalid=true]")].map((e) => e.id),
  IDCells: [...document.querySelectorAll("#dead td.id, #late td.id")].map((td) => {
    const r = document.createRange();
    r.selectNodeContents(td);
    return td.textContent + " " + r.getClientRects().length + " " + getComputedStyle(td).whiteSpace;
  }),
  TLLegend: lines(document.getElementById("tl-legend")),
  LiveLabel: text(document.querySelector("#timeline text.live-label")),
  Empty: [...document.querySelectorAll("svg text.empty")].map((t) => ({ Text: [...(t.children.length ? t.children : [t])].map(text).join(" "),
    Right: box(t).right, SVGRight: box(t.ownerSVGElement).right })),
  Errors: document.getElementById("errors").hidden ? "" : document.getElementById("errors").innerText.trim(),
  Status: document.getElementById("status").innerText.trim(),
  Cards: card,
  URL: location.href,
  Resources: performance.getEntriesByType("resource").map((r) => r.name),
};`

// history appends ON_TIME panes of three hours on 1, 2 and 3 March, as a
// replay of loaded history would: about a million euros an hour, beside
// the live hours' tens of euros.
func history(t *testing.T, wh warehouse.Appender) {
	var panes []window.Pane
	for d := 1; d <= 3; d++ {
		for h := 10; h < 13; h++ {
			start := time.Date(2026, 3, d, h, 0, 0, 0, time.UTC)
			for i, pais := range []string{"ES", "PT"} {
				panes = append(panes, window.Pane{Aggregation: dashboard.DefaultAggregation, Key: pais, WindowStart: start, WindowEnd: start.Add(time.Hour),
					Timing: window.TimingOnTime, Accumulation: window.Accumulating,
					Measures: window.Measures{Importe: mustDec(fmt.Sprintf("%d.25", 1_000_000+d*10_000+h*100+i)), Pedidos: 10_000, Unidades: 25_000}})
			}
		}
	}
	replaytest.AppendPanes(t, wh, panes...)
}

// waitFor reads the page until ok holds or the time is up; the page must
// get there by its own refreshes.
func waitFor(t *testing.T, wd *browsertest.Driver, limit time.Duration, what string, ok func(page) string) page {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var p page
		why := ""
		if err := wd.Execute(readPage, &p); err != nil {
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

// view is what a filter decides on the page.
type view struct {
	Errors   string   // the errors box
	Query    string   // the URL's
	Note     string   // the filter's
	Chosen   []string // the key picker's chosen keys
	Windows  int      // on the all-windows chart
	LiveKeys []string // the live panel's bars' keys, left to right
}

// storyDay is the default range once the story's orders are in; storyView
// the default view then.
const storyDay = "24 h up to 2026-03-14 19:00 UTC, the newest data"

var storyView = view{Note: "showing the " + storyDay + " (From and To choose other days)",
	Windows: 2, LiveKeys: []string{"ES", "PT", "ES", "FR"}}

// waitView reads the page until it shows want and more (if given) holds.
func waitView(t *testing.T, wd *browsertest.Driver, what string, want view,
	more func(page) string) page {
	t.Helper()
	return waitFor(t, wd, 20*time.Second, what, func(p page) string {
		got := view{Errors: p.Errors, Note: p.Note, Chosen: p.Selected, Windows: len(p.Timeline)}
		_, got.Query, _ = strings.Cut(p.URL, "?")
		for _, b := range p.Bars {
			got.LiveKeys = append(got.LiveKeys, b.Pais)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			return "(-want +got)\n" + diff
		}
		if more != nil {
			return more(p)
		}
		return ""
	})
}

// TestDashboardInChromium drops a file and publishes orders through the
// local server's functions, opens the page in headless Chromium, and checks
// what it shows; then plays more of the story with the page left open and
// checks that it caught up by itself; then adds history of early March, a
// dead letter and a too-late order, and checks the time axis, the scales,
// the counts, the links and the filters as an operator would use them.
func TestDashboardInChromium(t *testing.T) {
	chromium, driver := browsertest.Find(t)
	ctx := context.Background()
	srv, err := local.Start(ctx, local.Options{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Logger: logging.Discard(),
		Clock: clock.Virtual(at("17:00"))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown("test done") })
	url := srv.URL // serve mounts the page over its own backends

	d := serverDriver{client.Server{URL: srv.URL}}
	rec, err := d.Drop(ctx, "exportaciones/2026/03/14/pedidos-erp.csv", "../../testdata/exportaciones/2026/03/14/pedidos-erp.csv")
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != ledger.Done || rec.Counts.Loaded != 1 || rec.Counts.Quarantined != 3 || rec.Quarantine == "" {
		t.Fatalf("drop: %+v, want DONE with 1 loaded and 3 quarantined", rec)
	}
	check(t, play(ctx, d, act1))

	wd := browsertest.Start(t, chromium, driver)
	check(t, wd.Navigate(url+"/"))
	fileRow := []string{rec.Key.Object, "DONE", "lineas_pedido", "4", "1", "3 download",
		people(rec.FinishedAt), "cantidad:below_min: 1; column_count: 1; fecha:invalid_date: 1"}
	first := waitFor(t, wd, 15*time.Second, "act 1", func(p page) string {
		return diffPage(p, wantAct1, "17:15 | lag 10m00s behind processing time 17:25", fileRow)
	})
	for _, b := range first.Bars {
		if b.Height < 2 {
			t.Errorf("bar %s %s is %.1f px high: not visible", b.Start, b.Pais, b.Height)
		}
	}

	check(t, play(ctx, d, act2))
	final := waitFor(t, wd, 20*time.Second, "act 2 without a reload", func(p page) string {
		return diffPage(p, wantAct2, "18:00 | lag 22m00s behind processing time 18:22", fileRow)
	})

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

	// Act 3: history, a message that is no order, an order too late for
	// its window (15:10 closed for good at 16:00 + L = 18:00 <= W).
	wh := srv.App.Warehouse
	history(t, wh)
	_, err = d.Push(ctx, client.Step{Arrival: at("18:22"), Order: []byte(`{"pedido_id":"P-BAD","pais":"ES"}`)}, at("18:22"))
	check(t, err)
	res, err := d.pushAt(ctx, pedido("18:22", "P-6", "ES", "5.00", "5.00", 1, "15:10"))
	if err != nil || fate(res) != "too_late" {
		t.Fatalf("order P-6: %+v, %v; want too_late", res, err)
	}
	check(t, d.tick(ctx, at("18:22")))
	// The default view is the 24 h up to the newest data: the live hours,
	// not early March's history, and it says so next to the filter.
	waitView(t, wd, "the last 24 h, a dead letter, a too-late drop", storyView, func(p page) string {
		if p.Cards["card-dead"] != "1 | invalid messages, last 24 h" || p.Cards["card-late"] != "1 | orders after the allowed lateness, last 24 h" {
			return fmt.Sprintf("cards %v", p.Cards)
		}
		return ""
	})
	// From 1 March: history and the live hours on one time axis.
	check(t, wd.Navigate(url+"/?from=2026-03-01"))
	full := waitView(t, wd, "history from 1 March", view{Query: "from=2026-03-01",
		Note: "showing 2026-03-01 to now", Windows: 11, LiveKeys: storyView.LiveKeys}, nil)
	checkOperatorView(t, full, srv.URL, rec)

	check(t, wd.Resize(1280, 1900)) // the whole page, as an operator scrolls it

	checkFilters(t, wd)
	checkFilterURLs(t, wd, url)
	checkAggregationChoice(t, wd, url)
	sellLongSKUs(ctx, t, d)
	checkSKUView(ctx, t, wd, url, wh)
	checkFollowsTheData(ctx, t, wd, url, d)
}

// checkOperatorView checks the page with history, live hours, discards and
// a quarantined file, as an operator reads it.
func checkOperatorView(t *testing.T, p page, server string, rec ledger.Record) {
	t.Helper()
	// A real time axis: 1, 2 and 3 March 10:00 are a day apart, 3 to 14
	// March eleven days, and W (14 March 18:00) sits one hour after the
	// 17:00 window's left edge.
	x := map[string]float64{}
	hgt := map[string]float64{}
	for _, b := range p.Timeline {
		x[b.Start] = b.X
		hgt[b.Start] = b.Height
	}
	dayW := x["2026-03-02T10:00:00Z"] - x["2026-03-01T10:00:00Z"]
	if dayW < 20 {
		t.Fatalf("1 to 2 March is %.1f px: not a time axis (bars %v)", dayW, x)
	}
	near := func(what string, got, want float64) {
		if d := got - want; d < -2 || d > 2 {
			t.Errorf("%s: %.1f px, want %.1f (±2) on a linear time axis", what, got, want)
		}
	}
	near("2 to 3 March", x["2026-03-03T10:00:00Z"]-x["2026-03-02T10:00:00Z"], dayW)
	near("3 March 10:00 to 14 March 17:00", x["2026-03-14T17:00:00Z"]-x["2026-03-03T10:00:00Z"], dayW*(11+7.0/24))
	near("watermark marker after 14 March 17:00", p.TimelineW-x["2026-03-14T17:00:00Z"], dayW/24)
	if p.ChartW < 0 {
		t.Error("the live panel has no watermark marker")
	}
	// Live hours visible beside a million an hour: the log scale keeps the
	// 50 € hour above a third of the million-euro one.
	if r := hgt["2026-03-14T18:00:00Z"] / hgt["2026-03-03T12:00:00Z"]; r < 0.2 {
		t.Errorf("14 March 18:00 (50 €) is %.1f px beside 3 March 12:00 (2 M€) at %.1f px: the live hour vanishes",
			hgt["2026-03-14T18:00:00Z"], hgt["2026-03-03T12:00:00Z"])
	}
	for _, b := range p.Bars {
		if b.Height < 10 || !strings.HasPrefix(b.Start, "2026-03-14") {
			t.Errorf("live panel bar %s %s: %.1f px, want only 14 March, drawn on its own scale", b.Start, b.Pais, b.Height)
		}
	}
	// Units and separators on the axes and in the figures.
	for _, want := range []string{"1 M€", "100 k€", "1,000 €", "10 €", "100 €"} {
		if !slices.Contains(p.YTicks, want) {
			t.Errorf("y-axis labels %q lack %q", p.YTicks, want)
		}
	}
	if !slices.ContainsFunc(p.Rows, func(r []string) bool { return len(r) > 2 && r[2] == "1,031,001.25 €" && r[3] == "10,000" }) {
		t.Errorf("figures lack 3 March 10:00 PT as 1,031,001.25 € with 10,000 orders: %q", p.Rows)
	}
	// The server's clock, 24-hour, with its day: the day whose times are
	// shown without a date.
	if !regexp.MustCompile(`^Updated 2026-03-14 18:22 \(server clock\) · refreshes every [0-9.]+ s$`).MatchString(p.Status) {
		t.Errorf("status = %q", p.Status)
	}
	// Freshness and the counts with their latest rows.
	wantCards := map[string]string{
		"card-wm":    "18:00 | lag 22m00s behind processing time 18:22",
		"card-order": "18:21 | 1m00s ago",
		"card-file":  p.Cards["card-file"], // checked below: its seconds are the drop's
		"card-dead":  "1 | invalid messages, last 24 h",
		"card-late":  "1 | orders after the allowed lateness, last 24 h",
		"card-open":  "2 | 4 (window, country) cells",
	}
	if diff := cmp.Diff(wantCards, p.Cards); diff != "" {
		t.Errorf("cards (-want +got):\n%s", diff)
	}
	if f := p.Cards["card-file"]; !strings.HasPrefix(f, people(rec.FinishedAt)+" | 1h2") || !strings.HasSuffix(f, " ago | "+rec.Key.Object) {
		t.Errorf("last file loaded card = %q, want %s, how long before 18:22, and %s", f, rec.FinishedAt.UTC(), rec.Key.Object)
	}
	// The discards' and open windows' tables (the newest first); the key
	// choices, the largest first (ES's live hours outweigh PT's 1 € an hour
	// more of history); the order id cells on one line each, never
	// "P-00100" above "5".
	type tables struct {
		Dead, Late, Open   [][]string
		Countries, IDCells []string
	}
	wantTables := tables{
		Dead: [][]string{{"18:22", "P-BAD", "invalid: missing attribute momento_evento"}},
		Late: [][]string{{"18:22", "P-6", "15:10", "15:00"}},
		Open: [][]string{
			{"18:00–19:00", "FR", "1", "PENDING"}, {"18:00–19:00", "ES", "1", "PENDING"},
			{"17:00–18:00", "PT", "3", "DONE"}, {"17:00–18:00", "ES", "2", "DONE"},
		},
		Countries: []string{"ES", "PT", "FR"},
		IDCells:   []string{"P-BAD 1 nowrap", "P-6 1 nowrap"},
	}
	got := tables{Dead: p.Dead, Late: p.Late, Open: p.Open,
		Countries: p.Countries, IDCells: p.IDCells}
	if diff := cmp.Diff(wantTables, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	// Files: no generation in the label, the base name on one line, and a
	// quarantine link that downloads the quarantine file.
	for _, f := range p.Files {
		if strings.Contains(f[0], "#") || regexp.MustCompile(`\d{10,}`).MatchString(f[0]) {
			t.Errorf("file label %q carries a generation", f[0])
		}
	}
	if slices.ContainsFunc(p.BaseLines, func(n int) bool { return n != 1 }) {
		t.Errorf("file base names take %v lines: broken mid-word", p.BaseLines)
	}
	if len(p.QLinks) != 1 {
		t.Fatalf("quarantine links = %q, want one", p.QLinks)
	}
	if !strings.HasPrefix(p.QLinks[0], server+"/download/storage/v1/b/"+localapi.QuarantineBucket+"/o/") {
		t.Errorf("quarantine link %s is not the local server's download path", p.QLinks[0])
	}
	resp, err := http.Get(p.QLinks[0])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(string(body), "linea,codigo,motivo,fila") || strings.Count(string(body), "\n") != 4 {
		t.Errorf("GET %s: HTTP %d:\n%s\nwant the quarantine CSV: its header and 3 rows", p.QLinks[0], resp.StatusCode, body)
	}
	// Nothing from another host.
	origin := p.URL[:strings.Index(p.URL[len("http://"):], "/")+len("http://")]
	for _, r := range p.Resources {
		if !strings.HasPrefix(r, origin+"/") {
			t.Errorf("the page loaded %s, not from %s", r, origin)
		}
	}
	checkTimelineKinds(t, p)
}

// checkTimelineKinds: on the all-windows chart an hour with an EARLY pane
// is drawn hatched, unlike a final hour, and the legend says so; the band
// behind the bars is labelled.
func checkTimelineKinds(t *testing.T, p page) {
	t.Helper()
	early := map[string]bool{}
	for _, b := range p.Bars {
		if b.Timing == "EARLY" {
			early[b.Start] = true
		}
	}
	if len(early) == 0 {
		t.Fatalf("no EARLY bar on the live panel to check the all-windows chart with: %+v", p.Bars)
	}
	for _, b := range p.Timeline {
		hatched := strings.HasPrefix(b.Timing, "url(")
		if want := early[b.Start]; (b.Class == "tbar early") != want || hatched != want {
			t.Errorf("all-windows bar %s: class %q, fill %s; want EARLY drawn hatched = %t", b.Start, b.Class, b.Timing, want)
		}
	}
	for _, want := range []string{"final window", "EARLY window: provisional, may still grow", "the windows of the live chart below"} {
		if !strings.Contains(p.TLLegend, want) {
			t.Errorf("all-windows legend %q lacks %q", p.TLLegend, want)
		}
	}
	if p.LiveLabel == "" {
		t.Error("the band behind the all-windows chart has no label")
	}
}

// checkFilterURLs opens the page with filters in its URL, as a link or a
// person typing would: the controls show what the URL holds, and a filter
// the server refuses is shown refused, with its reason and no figures.
func checkFilterURLs(t *testing.T, wd *browsertest.Driver, url string) {
	t.Helper()
	check(t, wd.Navigate(url+"/?pais=ES,PT"))
	waitView(t, wd, "ES and PT chosen", view{Query: "pais=ES,PT",
		Note: "showing ES, PT · " + storyDay, Chosen: []string{"ES", "PT"}, Windows: 2,
		LiveKeys: []string{"ES", "PT", "ES"}}, nil)
	check(t, wd.Navigate(url+"/?from=2026-14-03"))
	const why = "from: 2026-14-03 is not a date YYYY-MM-DD"
	p := waitView(t, wd, "the bad date", view{Errors: "filter: " + why, Query: "from=2026-14-03",
		Note: "filter refused: " + why + " · nothing shown; correct it or press Reset"}, nil)
	if diff := cmp.Diff([]string{"f-from"}, p.Invalid); diff != "" {
		t.Errorf("controls marked invalid (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"Filter refused."}}, p.Rows); diff != "" {
		t.Errorf("a refused filter's figures (-want +got):\n%s", diff)
	}
	for id, c := range p.Cards {
		if c != "– | filter refused" {
			t.Errorf("card %s = %q, want – | filter refused", id, c)
		}
	}
	if len(p.Empty) != 2 || !strings.Contains(p.Empty[0].Text, why) {
		t.Errorf("charts say %+v, want the refusal", p.Empty)
	}
	if strings.Contains(p.Status, "showing the last figures") {
		t.Errorf("status %q", p.Status)
	}
}

// checkFilters uses the filter form as an operator would: one country,
// then early March only, then back to the default view (the last 24 h).
func checkFilters(t *testing.T, wd *browsertest.Driver) {
	t.Helper()
	set := func(key, from, to string) {
		t.Helper()
		script := fmt.Sprintf(`for (const o of document.getElementById("f-key").options) o.selected = o.value === %q;
document.getElementById("f-from").value = %q;
document.getElementById("f-to").value = %q;
document.getElementById("filters").requestSubmit();
return null;`, key, from, to)
		check(t, wd.Execute(script, nil))
	}
	set("FR", "", "")
	waitView(t, wd, "France only", view{Query: "key=FR", Note: "showing FR · " + storyDay,
		Chosen: []string{"FR"}, Windows: 1, LiveKeys: []string{"FR"}}, nil)
	set("", "2026-03-01", "2026-03-03")
	p := waitView(t, wd, "1 to 3 March", view{Query: "from=2026-03-01&to=2026-03-03",
		Note: "showing 2026-03-01 to 2026-03-03", Windows: 9,
		LiveKeys: []string{"ES", "PT", "ES", "PT", "ES", "PT"}}, nil)
	if p.TimelineW >= 0 {
		t.Error("the watermark (14 March) is drawn on a chart of 1 to 3 March")
	}
	check(t, wd.Execute(`document.getElementById("f-reset").click(); return null;`, nil))
	waitView(t, wd, "the default view again", storyView, nil)
}

// diffPage says how p differs from a page showing bars, the watermark card
// and the one file, or "" if it does not.
func diffPage(p page, bars []dashboard.Bar, watermark string, file []string) string {
	var wantBars []pageBar
	var wantRows [][]string
	for _, b := range bars {
		wantBars = append(wantBars, pageBar{Start: b.WindowStart.Format(time.RFC3339), Pais: b.Pais, Timing: b.Timing, Class: "t-" + b.Timing})
		wantRows = append(wantRows, []string{
			b.WindowStart.Format("15:04") + "–" + b.WindowEnd.Format("15:04"), b.Pais, money(b.Importe),
			fmt.Sprint(b.Pedidos), fmt.Sprint(b.Unidades), b.Timing, fmt.Sprint(b.PaneIndex),
		})
	}
	gotBars := make([]pageBar, len(p.Bars))
	for i, b := range p.Bars {
		gotBars[i] = pageBar{Start: b.Start, Pais: b.Pais, Timing: b.Timing, Class: b.Class}
	}
	// The live panel's axis labels every hour of its 12, up to the end of
	// the newest window.
	var wantHours []string
	end := bars[len(bars)-1].WindowEnd
	for t := end.Add(-12 * time.Hour); !t.After(end); t = t.Add(time.Hour) {
		wantHours = append(wantHours, t.Format("15:04"))
	}
	want := page{Hours: wantHours, Bars: wantBars, Rows: wantRows, Watermark: watermark, Files: [][]string{file}}
	got := page{Hours: p.Hours, Bars: gotBars, Rows: p.Rows, Watermark: p.Watermark, Files: p.Files, Errors: p.Errors}
	if diff := cmp.Diff(want, got); diff != "" {
		return "(-want +got)\n" + diff
	}
	return ""
}

// people is how the page writes a time of the server's day (14 March in
// the story): hours and minutes; another day's with its date.
func people(t time.Time) string {
	if t = t.UTC(); t.Format(time.DateOnly) == "2026-03-14" {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// money is how the page writes an amount: the exact decimal, at least two
// decimals, thousands separators, and the euro sign.
func money(d numeric.Dec) string { return render.GroupDigits(render.Money(d)) + " €" }

// skuAggregation is the declared aggregation keyed by the line's SKU;
// sessionAggregation the one of customer sessions.
const skuAggregation, sessionAggregation = "ventas_sku_hora_movil", "sesiones_cliente"

// checkAggregationChoice chooses the SKU aggregation in the page's control,
// as a person would: the bars are then the SKU's (the story sells one,
// MOCH-40L-AZ), read from that aggregation's view; choosing the session
// aggregation draws one bar per customer session under a "session, gap
// 30 min" title; choosing ventas_hora_pais again brings the countries back.
func checkAggregationChoice(t *testing.T, wd *browsertest.Driver, url string) {
	t.Helper()
	check(t, wd.Navigate(url+"/"))
	waitView(t, wd, "the default aggregation's bars", storyView, nil)
	var control struct {
		Options []string
		Chosen  string
	}
	if err := wd.Execute(`const s = document.getElementById("f-agg");
return {Options: [...s.options].map((o) => o.value), Chosen: s.value};`, &control); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{sessionAggregation, dashboard.DefaultAggregation, skuAggregation}, control.Options); diff != "" || control.Chosen != dashboard.DefaultAggregation {
		t.Errorf("aggregation control chooses %q among (-want +got):\n%s", control.Chosen, diff)
	}
	// choose picks name in the control, as a person would, and waits for
	// the page to show want.
	choose := func(name string, want view, more func(page) string) {
		t.Helper()
		check(t, wd.Execute(fmt.Sprintf(`const s = document.getElementById("f-agg");
s.value = %q;
s.dispatchEvent(new Event("change"));
return null;`, name), nil))
		waitView(t, wd, name, want, more)
	}
	choose(skuAggregation, view{Query: "aggregation=" + skuAggregation, Note: storyView.Note,
		LiveKeys: []string{"MOCH-40L-AZ"}}, func(p page) string {
		if len(p.Rows) == 0 || p.Rows[0][1] != "MOCH-40L-AZ" {
			return fmt.Sprintf("figures table %q, want MOCH-40L-AZ's rows", p.Rows)
		}
		return ""
	})
	// Sessions end at their last order plus the gap: 18:10 + 30 min.
	choose(sessionAggregation, view{Query: "aggregation=" + sessionAggregation,
		Note: strings.Replace(storyView.Note, "19:00", "18:40", 1), Windows: 1,
		LiveKeys: []string{"C-1"}}, func(page) string {
		var title string
		if err := wd.Execute(`return document.getElementById("chart-title").textContent;`, &title); err != nil || !strings.Contains(title, "session, gap 30 min") {
			return fmt.Sprintf("chart title %q (%v), want it to say session, gap 30 min", title, err)
		}
		return ""
	})
	choose(dashboard.DefaultAggregation, storyView, nil)
}

// longSKUs are sold in one 18:12 order each: names long enough to pile
// into each other if the chart did not fit its labels.
var longSKUs = []string{"CBC-FLEECE-MUJER-M", "CAL-TREK-42", "CET-MERINO-LARGO-XL", "GORRO-LANA-ROJO", "BOTA-GTX-44-NEGRO", "MOCH-20L-VERDE", "FORRO-POLAR-NINO-8", "GUANTES-SKI-L"}

// sellLongSKUs publishes one order per SKU at 18:22 (event time 18:12, on
// time: W is 18:00) and ticks at 18:24, so each gets EARLY panes.
func sellLongSKUs(ctx context.Context, t *testing.T, d serverDriver) {
	t.Helper()
	for i, sku := range longSKUs {
		price := fmt.Sprintf("%d.50", 10+7*i)
		body := fmt.Sprintf(`{"pedido_id":"P-S%d","cliente_id":"C-9","pais":"ES","importe_total":%q,"lineas":[{"sku":%q,"cantidad":1,"precio_unitario":%q}]}`, i, price, sku, price)
		if _, err := d.Push(ctx, client.Step{Arrival: at("18:22"), EventTime: at("18:12").Format(time.RFC3339), Order: []byte(body)}, at("18:22")); err != nil {
			t.Fatal(err)
		}
	}
	check(t, d.tick(ctx, at("18:24")))
}

// checkSKUView opens the SKU aggregation (a sliding hour every 15
// minutes) and checks that the page says what it declares and draws it
// truthfully: no country wording; a key picker of the SKUs present, the
// largest first; each plotted (window, SKU) value the view's row; each
// point of the all-windows chart one window's total, never overlapping
// windows added; and no label over another.
func checkSKUView(ctx context.Context, t *testing.T, wd *browsertest.Driver, url string, wh warehouse.Reader) {
	t.Helper()
	check(t, wd.Navigate(url+"/?aggregation="+skuAggregation))
	p := waitFor(t, wd, 15*time.Second, "the SKU view with the long SKUs", func(p page) string {
		if len(p.Bars) < len(longSKUs) {
			return fmt.Sprintf("%d bars", len(p.Bars))
		}
		return ""
	})
	sales, err := warehouse.ReadNewestWindows(ctx, wh, warehouse.NewestWindows{View: skuAggregation, Aggregation: skuAggregation, Windows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	row := map[string]float64{}   // window start + SKU -> importe
	total := map[string]float64{} // window start -> importe of every SKU
	for _, s := range sales {
		v, _ := strconv.ParseFloat(s.Importe.String(), 64)
		start := s.WindowStart.Format(time.RFC3339)
		row[start+" "+s.Pais] = v
		total[start] += v
	}

	if m := regexp.MustCompile(`(?i)[^\n]{0,30}countr[^\n]{0,30}`).FindAllString(p.Text, -1); len(m) > 0 {
		t.Errorf("the SKU view speaks of countries: %q", m)
	}
	for _, want := range []string{"Sales in the last 1 h, every 15 min", "(window, SKU) cells", "SKU"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("the SKU view does not say %q", want)
		}
	}
	if p.Picker != "SELECT" || len(p.Countries) < len(longSKUs) || p.Countries[0] != "MOCH-40L-AZ" {
		t.Errorf("key control %s with options %q: want a picker of the SKUs present, the largest (MOCH-40L-AZ) first", p.Picker, p.Countries)
	}

	// Each bar is one (window, SKU) of the view, its length its value.
	perPx := 0.0
	for _, b := range p.Bars {
		want, ok := row[b.Start+" "+b.Pais]
		got, _ := strconv.ParseFloat(b.Importe, 64)
		if !ok || math.Abs(got-want) > 0.005 {
			t.Errorf("bar %s %s plots %s, the view's row holds %v (found %t)", b.Start, b.Pais, b.Importe, want, ok)
		}
		if !strings.Contains(b.Title, b.Pais) {
			t.Errorf("bar %s %s: its tooltip %q does not name it", b.Start, b.Pais, b.Title)
		}
		if long := math.Max(b.W, b.Height); perPx == 0 {
			perPx = long / want
		} else if math.Abs(long-want*perPx) > 1.5 {
			t.Errorf("bar %s %s is %.1f px for %v, want %.1f on the chart's scale", b.Start, b.Pais, long, want, want*perPx)
		}
	}
	// The all-windows chart: one point per window at its end, its total
	// that window's, never windows added together.
	if len(p.Timeline) > 0 || len(p.Points) != len(total) {
		t.Errorf("all-windows chart: %d bars and %d points for %d sliding windows; want one point per window", len(p.Timeline), len(p.Points), len(total))
	}
	for _, pt := range p.Points {
		got, _ := strconv.ParseFloat(pt.Total, 64)
		if math.Abs(got-total[pt.Start]) > 0.005 {
			t.Errorf("point of window %s plots %s, the view's rows of that window add to %v", pt.Start, pt.Total, total[pt.Start])
		}
	}
	checkNoOverlap(t, p)
}

// checkNoOverlap: no text of the charts overlaps another (layout boxes).
func checkNoOverlap(t *testing.T, p page) {
	t.Helper()
	ls := p.Labels
	for i := range ls {
		for j := i + 1; j < len(ls); j++ {
			a, b := ls[i], ls[j]
			w := math.Min(a.X+a.W, b.X+b.W) - math.Max(a.X, b.X)
			h := math.Min(a.Y+a.H, b.Y+b.H) - math.Max(a.Y, b.Y)
			if w > 1 && h > 1 && a.W > 0 && b.W > 0 {
				t.Errorf("label %q overlaps %q by %.0f×%.0f px", a.Text, b.Text, w, h)
			}
		}
	}
}

// checkFollowsTheData moves the server's clock to December, as a wall
// clock would be after the README's sample story of 14 March: the default
// view still shows the story's windows and says so; times of another day
// carry their date and durations read 262d 13h; an empty chart says what
// is missing in full, within the chart.
func checkFollowsTheData(ctx context.Context, t *testing.T, wd *browsertest.Driver, url string, d serverDriver) {
	t.Helper()
	december := time.Date(2026, 12, 2, 7, 34, 0, 0, time.UTC)
	check(t, d.tick(ctx, december))
	check(t, wd.Navigate(url+"/"))
	p := waitView(t, wd, "December's page", storyView, func(p page) string {
		wm := p.Cards["card-wm"]
		if !strings.Contains(wm, "2026-12-02") && !strings.Contains(wm, "07:24") {
			return "watermark card " + wm
		}
		return ""
	})
	if len(p.Rows) == 0 || !strings.HasPrefix(p.Rows[0][0], "2026-03-14 17:00–18:00") {
		t.Errorf("figures table's first row %q: want its window with its date, 2026-03-14 17:00–18:00", p.Rows)
	}
	if o := p.Cards["card-order"]; !regexp.MustCompile(`^2026-03-14 18:2\d \| 262d 1\dh ago$`).MatchString(o) {
		t.Errorf("last order card %q, want 2026-03-14 18:2x | 262d 1xh ago", o)
	}
	check(t, wd.Navigate(url+"/?from=2026-11-01"))
	p = waitFor(t, wd, 15*time.Second, "an empty range", func(p page) string {
		if len(p.Empty) != 2 {
			return fmt.Sprintf("empty messages %+v", p.Empty)
		}
		return ""
	})
	for _, e := range p.Empty {
		if !strings.HasSuffix(e.Text, ".") || !strings.Contains(e.Text, "2026-11-01") || e.Right > e.SVGRight+0.5 {
			t.Errorf("empty chart says %q, ending at x %.0f in a chart ending at %.0f: want it in full, inside the chart", e.Text, e.Right, e.SVGRight)
		}
	}
}
