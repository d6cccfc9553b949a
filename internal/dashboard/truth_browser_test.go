package dashboard_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/test/browsertest"
)

// truthPage is what checkSKUView and checkFollowsTheData read of the page.
type truthPage struct {
	Text    string // the page's visible text
	Picker  string // the key control's tag and type: "SELECT" or "INPUT text"
	Options []string
	Note    string
	Bars    []struct {
		Start, Key, Importe, Title string
		W, H                       float64
	}
	Points []struct {
		Start, End, Total string
		CY                float64
	}
	TLBars int
	Labels []struct {
		Text       string
		X, Y, W, H float64
	}
	Empty []struct {
		Text            string
		Right, SVGRight float64
	}
	Cards map[string]string
	Rows  [][]string
}

const readTruth = `
const box = (e) => e.getBoundingClientRect();
const card = {};
for (const c of document.querySelectorAll(".card")) card[c.id] = c.querySelector("dd").innerText.trim().split("\n").map((s) => s.trim()).filter(Boolean).join(" | ");
const picker = document.getElementById("f-key") || document.getElementById("f-pais");
return {
  Text: document.body.innerText,
  Picker: picker.tagName + (picker.type === "text" ? " text" : ""),
  Options: picker.options ? [...picker.options].map((o) => o.value) : [],
  Note: document.getElementById("f-note").textContent.trim(),
  Bars: [...document.querySelectorAll("#chart g.bar")].map((g) => {
    const r = box(g.querySelector("rect"));
    return { Start: g.getAttribute("data-window"), Key: g.getAttribute("data-key") || g.getAttribute("data-pais"), Importe: g.getAttribute("data-importe"),
      Title: g.querySelector("title").textContent, W: r.width, H: r.height };
  }),
  Points: [...document.querySelectorAll("#timeline g.tpoint")].map((g) => ({ Start: g.getAttribute("data-window"), End: g.getAttribute("data-end"),
    Total: g.getAttribute("data-total"), CY: box(g.querySelector("circle")).y })),
  TLBars: document.querySelectorAll("#timeline g.tbar").length,
  Labels: [...document.querySelectorAll("#chart text, #timeline text")].filter((t) => !t.classList.contains("empty") && !t.classList.contains("axis-title")).map((t) => {
    const r = box(t);
    return { Text: t.textContent, X: r.x, Y: r.y, W: r.width, H: r.height };
  }),
  Empty: [...document.querySelectorAll("svg text.empty")].map((t) => ({ Text: [...(t.children.length ? t.children : [t])].map((s) => s.textContent).join(" "),
    Right: box(t).right, SVGRight: box(t.ownerSVGElement).right })),
  Cards: card,
  Rows: [...document.querySelectorAll("#bars tbody tr")].map((tr) => [...tr.cells].map((td) => td.textContent.trim())),
};`

// longSKUs are sold in one 18:12 order each: names long enough to pile
// into each other if the chart did not fit its labels.
var longSKUs = []string{"CBC-FLEECE-MUJER-M", "CAL-TREK-42", "CET-MERINO-LARGO-XL", "GORRO-LANA-ROJO", "BOTA-GTX-44-NEGRO", "MOCH-20L-VERDE", "FORRO-POLAR-NINO-8", "GUANTES-SKI-L"}

// sellLongSKUs publishes one order per SKU at 18:22 (event time 18:12, on
// time: W is 18:00) and ticks at 18:24, so each gets EARLY panes.
func sellLongSKUs(ctx context.Context, t *testing.T, srv string) {
	t.Helper()
	for i, sku := range longSKUs {
		price := fmt.Sprintf("%d.50", 10+7*i)
		body := fmt.Sprintf(`{"pedido_id":"P-S%d","cliente_id":"C-9","pais":"ES","importe_total":%q,"lineas":[{"sku":%q,"cantidad":1,"precio_unitario":%q}]}`, i, price, sku, price)
		if _, err := (client.Server{URL: srv}).Push(ctx, client.Step{Arrival: at("18:22"), EventTime: at("18:12").Format(time.RFC3339), Order: []byte(body)}, at("18:22")); err != nil {
			t.Fatal(err)
		}
	}
	if err := (serverDriver{url: srv}).tick(ctx, at("18:24")); err != nil {
		t.Fatal(err)
	}
}

// checkSKUView opens the SKU aggregation (a sliding hour every 15
// minutes) and checks that the page says what it declares and draws it
// truthfully: no country wording; a key picker of the SKUs present, the
// largest first; each plotted (window, SKU) value the view's row; each
// point of the all-windows chart one window's total, never overlapping
// windows added; and no label over another.
func checkSKUView(ctx context.Context, t *testing.T, wd *browsertest.Driver, url string, wh warehouse.Reader) {
	t.Helper()
	if err := wd.Navigate(url + "/?aggregation=" + skuAggregation); err != nil {
		t.Fatal(err)
	}
	p := waitFor(t, wd, 15*time.Second, "the SKU view with the long SKUs", func(p truthPage) string {
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
	if p.Picker != "SELECT" || len(p.Options) < len(longSKUs) || p.Options[0] != "MOCH-40L-AZ" {
		t.Errorf("key control %s with options %q: want a picker of the SKUs present, the largest (MOCH-40L-AZ) first", p.Picker, p.Options)
	}

	// Each bar is one (window, SKU) of the view, its length its value.
	perPx := 0.0
	for _, b := range p.Bars {
		want, ok := row[b.Start+" "+b.Key]
		got, _ := strconv.ParseFloat(b.Importe, 64)
		if !ok || math.Abs(got-want) > 0.005 {
			t.Errorf("bar %s %s plots %s, the view's row holds %v (found %t)", b.Start, b.Key, b.Importe, want, ok)
		}
		if !strings.Contains(b.Title, b.Key) {
			t.Errorf("bar %s %s: its tooltip %q does not name it", b.Start, b.Key, b.Title)
		}
		if long := math.Max(b.W, b.H); perPx == 0 {
			perPx = long / want
		} else if math.Abs(long-want*perPx) > 1.5 {
			t.Errorf("bar %s %s is %.1f px for %v, want %.1f on the chart's scale", b.Start, b.Key, long, want, want*perPx)
		}
	}
	// The all-windows chart: one point per window at its end, its total
	// that window's, never windows added together.
	if p.TLBars > 0 || len(p.Points) != len(total) {
		t.Errorf("all-windows chart: %d bars and %d points for %d sliding windows; want one point per window", p.TLBars, len(p.Points), len(total))
	}
	for _, pt := range p.Points {
		got, _ := strconv.ParseFloat(pt.Total, 64)
		if math.Abs(got-total[pt.Start]) > 0.005 {
			t.Errorf("point of window %s plots %s, the view's rows of that window add to %v", pt.Start, pt.Total, total[pt.Start])
		}
	}
	checkNoOverlap(t, p)
	if shot := os.Getenv("DASHBOARD_SKU_SCREENSHOT"); shot != "" {
		if err := wd.Screenshot(shot); err != nil {
			t.Error(err)
		}
	}
}

// checkNoOverlap: no text of the charts overlaps another (layout boxes).
func checkNoOverlap(t *testing.T, p truthPage) {
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
func checkFollowsTheData(ctx context.Context, t *testing.T, wd *browsertest.Driver, url, srv string) {
	t.Helper()
	december := time.Date(2026, 12, 2, 7, 34, 0, 0, time.UTC)
	if err := (serverDriver{url: srv}).tick(ctx, december); err != nil {
		t.Fatal(err)
	}
	if err := wd.Navigate(url + "/"); err != nil {
		t.Fatal(err)
	}
	const note = "showing the 24 h up to 2026-03-14 19:00 UTC, the newest data (From and To choose other days)"
	p := waitFor(t, wd, 15*time.Second, "December's page", func(p truthPage) string {
		if !strings.Contains(p.Cards["card-wm"], "2026-12-02") && !strings.Contains(p.Cards["card-wm"], "07:24") {
			return "watermark card " + p.Cards["card-wm"]
		}
		return ""
	})
	if p.Note != note {
		t.Errorf("note %q, want %q", p.Note, note)
	}
	if p.TLBars != 2 || len(p.Bars) == 0 {
		t.Errorf("%d windows on the all-windows chart, %d live bars: want the story's 2 hours", p.TLBars, len(p.Bars))
	}
	if len(p.Rows) == 0 || !strings.HasPrefix(p.Rows[0][0], "2026-03-14 17:00–18:00") {
		t.Errorf("figures table's first row %q: want its window with its date, 2026-03-14 17:00–18:00", p.Rows)
	}
	if o := p.Cards["card-order"]; !regexp.MustCompile(`^2026-03-14 18:2\d \| 262d 1\dh ago$`).MatchString(o) {
		t.Errorf("last order card %q, want 2026-03-14 18:2x | 262d 1xh ago", o)
	}
	if err := wd.Navigate(url + "/?from=2026-11-01"); err != nil {
		t.Fatal(err)
	}
	p = waitFor(t, wd, 15*time.Second, "an empty range", func(p truthPage) string {
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
