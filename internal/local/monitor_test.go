package local

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/test/browsertest"
)

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
