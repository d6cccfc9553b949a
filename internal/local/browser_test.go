package local

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
	ten := int64(600) // 18:25 minus the watermark 18:15
	at := func(hour, minute int) time.Time { return time.Date(2026, 3, 14, hour, minute, 0, 0, time.UTC) }
	want := dashboard.Monitoring{
		From: at(18, 25).Add(-24 * time.Hour), Until: at(18, 25), // 24 h of processing time up to the server's clock
		Minutes: []dashboard.MinuteSample{
			// publish ran at 17:00: every order accepted then; P-001005's amount is a dead letter
			{At: at(17, 0), Accepted: 9, DeadLetters: 1},
			// the orders accepted at 17:00 waited 85 minutes for the tick
			{At: at(18, 25), FreshnessSeconds: &ten, SystemLagSeconds: 85 * 60},
		},
		Now: dashboard.Gauges{FreshnessSeconds: &ten}, // no system lag: the tick folded every order
	}
	ignore := cmpopts.IgnoreFields(dashboard.Monitoring{}, "Hours", "Errors", "BacklogNote")
	if diff := cmp.Diff(want, *m, ignore); diff != "" {
		t.Errorf("monitoring panel (-want +got):\n%s", diff)
	}
	if !strings.Contains(m.BacklogNote, "no Pub/Sub here") {
		t.Errorf("backlog note %q", m.BacklogNote)
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
	want := panel{Freshness: "now " + render.Duration(10*time.Minute), Lag: "now 0s", // the tick folded every order
		Accepted: "9 in range", Dead: "1 + 0 in range", Backlog: "not measured here",
		FreshPoints: []string{"18:25=600"}, LagPoints: []string{"17:00=0", "18:25=5100"}, // 85 min of system lag
		AcceptedBars: []string{"17:00=9"}, DeadBars: []string{"17:00=1"}}
	if diff := cmp.Diff(want, *p); diff != "" {
		t.Errorf("the panel as drawn (-want +got):\n%s", diff)
	}
}
