package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/test/browsertest"
)

// A hostile page, served from another loopback origin and opened in
// headless Chromium, tries every route of a running serve: it must read
// nothing and change nothing.

// hostilePage fetches each route of target: cross-origin reads (mode
// "cors", which needs the server's grant) and blind writes (mode
// "no-cors": a simple request the browser sends without a preflight).
const hostilePage = `<!doctype html><title>hostile</title><script>
const T = %q, Q = %q;
const attempts = [
  ["list landing", "GET", "/storage/v1/b/alpinashop-catalogo/o", "cors"],
  ["download quarantine", "GET", "/storage/v1/b/alpinashop-cuarentena/o/" + encodeURIComponent(Q) + "?alt=media", "cors"],
  ["download link", "GET", "/download/storage/v1/b/alpinashop-cuarentena/o/" + encodeURIComponent(Q) + "?alt=media", "cors"],
  ["delete quarantine object", "DELETE", "/storage/v1/b/alpinashop-cuarentena/o/" + encodeURIComponent(Q), "cors"],
  ["upload to landing", "POST", "/upload/storage/v1/b/alpinashop-catalogo/o?uploadType=media&name=exportaciones/2026/03/14/evil.csv", "no-cors",
   "pedido_id,linea,fecha,sku,cantidad,precio_unitario,cliente_id,pais\nP-EVIL,1,2026-03-14,MOCH-40L-AZ,1,\"89,90\",C-1,ES\n"],
  ["delete all buckets", "POST", "/_internal/delete_all", "no-cors", ""],
  ["ingest (legacy event, text/plain)", "POST", "/IngestCSV", "no-cors",
   JSON.stringify({context: {eventId: "x", eventType: "google.storage.object.finalize", resource: {service: "storage.googleapis.com", name: "projects/_/buckets/alpinashop-catalogo/objects/exportaciones/2026/03/14/evil.csv", type: "storage#object"}},
                   data: {bucket: "alpinashop-catalogo", name: "exportaciones/2026/03/14/evil.csv", generation: "1"}})],
  ["push an order (text/plain)", "POST", "/AggregateOrders", "no-cors", JSON.stringify({message: {data: btoa("{}"), messageId: "evil"}})],
  ["tick (text/plain)", "POST", "/AdvanceWatermark", "no-cors", "{}"],
  ["sweep (text/plain)", "POST", "/SweepLanding", "no-cors", "{}"],
  ["local query (text/plain)", "POST", "/_local/query", "no-cors", JSON.stringify({sql: "DELETE FROM lineas_pedido"})],
  ["local ledger", "GET", "/_local/ledger", "cors"],
  ["local query read", "POST", "/_local/query", "cors", JSON.stringify({sql: "SELECT 1"})],
  ["dashboard", "GET", "/", "cors"],
];
window.results = null;
(async () => {
  const out = [];
  for (const [name, method, path, mode, body] of attempts) {
    const init = {method, mode, credentials: "include"};
    if (body !== undefined && method !== "GET") { init.body = body; }
    try {
      const r = await fetch(T + path, init);
      let text = "";
      try { text = (await r.text()).slice(0, 80); } catch (e) {}
      out.push({name, got: r.type + " " + r.status + (text ? " " + text : "")});
    } catch (e) {
      out.push({name, got: "refused"});
    }
  }
  window.results = out;
})();
</script>`

func TestHostilePageGetsNothing(t *testing.T) {
	chromium, driver := browsertest.Find(t)
	s := startOwn(t)
	t.Cleanup(func() { _ = s.Shutdown("test") })
	ctx := context.Background()
	const qname = "cuarentena/2026/03/14/rechazos.csv"
	for _, o := range []struct{ bucket, name string }{{localapi.LandingBucket, "exportaciones/2026/03/14/pedidos.csv"}, {localapi.QuarantineBucket, qname}} {
		resp, err := http.Post(s.URL+"/upload/storage/v1/b/"+o.bucket+"/o?uploadType=media&name="+o.name, "text/csv", strings.NewReader("a,b\n1,2\n"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("seed %s: HTTP %d", o.name, resp.StatusCode)
		}
	}
	before := snapshot(ctx, t, s)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, hostilePage, s.URL, qname)
	}))
	defer page.Close()
	wd := browsertest.Start(t, chromium, driver)
	if err := wd.Navigate(page.URL); err != nil {
		t.Fatal(err)
	}
	var results []struct{ Name, Got string }
	deadline := time.Now().Add(30 * time.Second)
	for results == nil && time.Now().Before(deadline) {
		if err := wd.Execute("return window.results", &results); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if results == nil {
		t.Fatal("the page did not finish its attempts within 30 s")
	}
	for _, r := range results {
		t.Logf("%-35s %s", r.Name, r.Got)
		// A cross-origin read is refused by the browser (no grant); a blind
		// write yields an opaque answer whose status the page cannot see.
		if r.Got != "refused" && r.Got != "opaque 0" {
			t.Errorf("%s: the page got %q, want nothing", r.Name, r.Got)
		}
	}
	if diff := cmp.Diff(before, snapshot(ctx, t, s)); diff != "" {
		t.Errorf("the page changed the server's state (-before +after):\n%s", diff)
	}
}

// state is what a hostile page could change.
type state struct {
	Objects     map[string][]string // bucket -> object names
	Ledger      int
	Lines       string // rows of lineas_pedido
	DeadLetters int
}

func snapshot(ctx context.Context, t *testing.T, s *Server) state {
	t.Helper()
	st := state{Objects: map[string][]string{}}
	for _, b := range []string{localapi.LandingBucket, localapi.QuarantineBucket, localapi.StagingBucket} {
		resp, err := http.Get(s.URL + "/storage/v1/b/" + b + "/o")
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Items []struct{ Name string } }
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("list %s: HTTP %d: %v", b, resp.StatusCode, err)
		}
		for _, it := range list.Items {
			st.Objects[b] = append(st.Objects[b], it.Name)
		}
	}
	recs, err := s.App.Ledger.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Ledger = len(recs)
	res, err := s.App.Querier().Query(ctx, "SELECT COUNT(*) FROM lineas_pedido")
	if err != nil {
		t.Fatal(err)
	}
	st.Lines = fmt.Sprint(res.Rows)
	if st.DeadLetters, err = s.App.Stream.DeadLettersPending(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// publishAndTick walks the README's orders path on s (a virtual clock at
// 17:00): alpipe publish testdata/pedidos/historia.jsonl, then alpipe tick
// --now 18:25.
func publishAndTick(t *testing.T, s *Server) {
	t.Helper()
	ctx := context.Background()
	c := client.Server{URL: s.URL}
	steps, err := client.ReadStepsFile("../../testdata/pedidos/historia.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if !st.Tick.IsZero() {
			continue
		}
		if _, err := c.Push(ctx, st, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.SetClock(ctx, time.Date(2026, 3, 14, 18, 25, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tick(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestMonitoringPanelOnServe: after a publish and a tick, serve's
// dashboard answers data freshness (18:25 minus the watermark 18:15),
// system lag (the orders accepted at 17:00 waited 85 minutes for the
// tick), the orders accepted per minute and the dead letters, over
// processing time; and says why there is no backlog. Then the page draws
// that panel in Chromium.
func TestMonitoringPanelOnServe(t *testing.T) {
	s := startOwn(t)
	t.Cleanup(func() { _ = s.Shutdown("test") })
	publishAndTick(t, s)

	resp, err := http.Get(s.URL + dashboard.APIPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var snap dashboard.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	m := snap.Monitor
	if m == nil {
		t.Fatal("no monitoring panel in the snapshot")
	}
	var accepted, dead int64
	byMinute := map[string]dashboard.MinuteSample{}
	for _, ms := range m.Minutes {
		accepted += ms.Accepted
		dead += ms.DeadLetters
		byMinute[ms.At.Format("15:04")] = ms
	}
	tick := byMinute["18:25"]
	if tick.FreshnessSeconds == nil || *tick.FreshnessSeconds != 600 {
		t.Errorf("freshness at 18:25 = %v, want 600 s (18:25 - W 18:15); minutes %+v", tick.FreshnessSeconds, m.Minutes)
	}
	if tick.SystemLagSeconds != 85*60 {
		t.Errorf("system lag at 18:25 = %d s, want %d (accepted at 17:00, folded at 18:25)", tick.SystemLagSeconds, 85*60)
	}
	if got := byMinute["17:00"].Accepted; got == 0 || got != accepted {
		t.Errorf("accepted at 17:00 = %d of %d in range, want every accepted order there (publish ran at 17:00)", got, accepted)
	}
	if dead != 1 {
		t.Errorf("dead letters = %d, want 1 (P-001005's amount)", dead)
	}
	if m.Now.FreshnessSeconds == nil || *m.Now.FreshnessSeconds != 600 || m.Now.SystemLagSeconds != 0 {
		t.Errorf("now: %+v, want freshness 600 s and no system lag (the tick folded every order)", m.Now)
	}
	if !m.From.Equal(time.Date(2026, 3, 13, 18, 25, 0, 0, time.UTC)) || !m.Until.Equal(time.Date(2026, 3, 14, 18, 25, 0, 0, time.UTC)) {
		t.Errorf("range %s to %s, want the 24 h of processing time up to the server's clock", m.From, m.Until)
	}
	if m.Backlog != nil || !strings.Contains(m.BacklogNote, "no Pub/Sub here") {
		t.Errorf("backlog %+v, note %q", m.Backlog, m.BacklogNote)
	}
	t.Run("in Chromium", func(t *testing.T) { panelInChromium(t, s) })
}

// panelInChromium: the page draws the panel of a served story: the
// freshness and system lag points, the accepted orders and the dead letter
// as bars, with the figures and the one duration format of the CLI
// (render.Duration).
func panelInChromium(t *testing.T, s *Server) {
	chromium, driver := browsertest.Find(t)
	wd := browsertest.Start(t, chromium, driver)
	if err := wd.Navigate(s.URL + "/"); err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Hidden                                  bool
		Freshness, Lag, Accepted, Dead, Backlog string
		FreshPoints, LagPoints                  []string
		AcceptedBars, DeadBars                  []string
	}
	const script = `const fig = (id) => document.getElementById(id);
const now = (id) => fig(id).querySelector(".mon-now").textContent;
const vals = (sel) => [...document.querySelectorAll(sel)].map((e) => e.getAttribute("data-at").slice(11, 16) + "=" + e.getAttribute("data-value"));
if (!document.body.dataset.updated) return null;
return {Hidden: fig("monitor").hidden, Freshness: now("mon-freshness"), Lag: now("mon-lag"), Accepted: now("mon-accepted"), Dead: now("mon-discards"), Backlog: now("mon-backlog"),
  FreshPoints: vals("#mon-freshness circle"), LagPoints: vals("#mon-lag circle"), AcceptedBars: vals("#mon-accepted rect"), DeadBars: vals('#mon-discards [data-series="dead letters"] rect')};`
	var p *panel
	for deadline := time.Now().Add(30 * time.Second); p == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := wd.Execute(script, &p); err != nil {
			t.Fatal(err)
		}
	}
	if p == nil {
		t.Fatal("the page did not render a snapshot within 30 s")
	}
	if p.Hidden {
		t.Fatal("the monitoring panel is hidden")
	}
	if want := "now " + render.Duration(10*time.Minute); p.Freshness != want {
		t.Errorf("freshness reads %q, want %q", p.Freshness, want)
	}
	if !slices.Contains(p.FreshPoints, "18:25=600") {
		t.Errorf("freshness points %v, want 18:25=600", p.FreshPoints)
	}
	if !slices.Contains(p.LagPoints, "18:25=5100") {
		t.Errorf("system lag points %v, want 18:25=5100 (85 min)", p.LagPoints)
	}
	if len(p.AcceptedBars) != 1 || !strings.HasPrefix(p.AcceptedBars[0], "17:00=") {
		t.Errorf("accepted bars %v, want one at 17:00", p.AcceptedBars)
	}
	if len(p.DeadBars) != 1 || p.DeadBars[0] != "17:00=1" {
		t.Errorf("dead letter bars %v, want 17:00=1", p.DeadBars)
	}
	if p.Backlog != "not measured here" {
		t.Errorf("backlog reads %q", p.Backlog)
	}
	if p.Lag != "now 0s" {
		t.Errorf("system lag reads %q, want now 0s (the tick folded every order)", p.Lag)
	}
	t.Logf("panel: freshness %q, system lag %q, accepted %q, discards %q", p.Freshness, p.Lag, p.Accepted, p.Dead)
}
