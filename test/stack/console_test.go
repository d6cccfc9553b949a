package stack

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// consoleStack is the part of a Stack the console reads: the BigQuery
// fake and a test clock; it needs no emulator.
func consoleStack(t *testing.T) *Stack {
	t.Helper()
	f, err := bqfake.New(bqfake.Options{Project: "p", Dataset: "d"})
	check(t, err)
	start := time.Date(2026, 3, 14, 20, 30, 0, 0, time.UTC)
	file := filepath.Join(t.TempDir(), "clock")
	check(t, clock.Set(file, start))
	s := &Stack{BigQuery: f, clockFile: file, now: start}
	s.Monitor = dashboard.NewMonitor(s.Now)
	return s
}

func TestConsole(t *testing.T) {
	s := consoleStack(t)
	// Two rows through BigQuery's own API, as the services write them.
	bq := httptest.NewServer(s.BigQuery.Handler())
	defer bq.Close()
	insert := `{"rows":[` +
		`{"insertId":"o1","json":{"opinion_id":"O-1","sku":"MOCH-40L-AZ","fecha":"2026-03-14","puntuacion":5,"texto":"muy buena","pais":"ES","source_object":"gs://b/o.csv","source_generation":"7","source_line":2,"ingested_at":"2026-03-14T20:30:00Z"}},` +
		`{"insertId":"o2","json":{"opinion_id":"O-2","sku":"GORRO-LANA-RJ","fecha":"2026-03-14","puntuacion":3,"pais":"FR","source_object":"gs://b/o.csv","source_generation":"7","source_line":3,"ingested_at":"2026-03-14T20:30:00Z"}}]}`
	resp, err := http.Post(bq.URL+"/bigquery/v2/projects/p/datasets/d/tables/opiniones/insertAll", "application/json", strings.NewReader(insert))
	check(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := len(s.BigQuery.Rows("opiniones")); n != 2 {
		t.Fatalf("insertAll: opiniones has %d rows, want 2: HTTP %d %s", n, resp.StatusCode, body)
	}

	srv := httptest.NewServer(console(t, s))
	defer srv.Close()
	tests := []struct {
		name       string
		method     string
		path       string
		header     map[string]string
		wantStatus int
		want       []string // lines the answer must hold, in order
	}{
		{name: "tables with their row counts", method: "GET", path: "/tables", wantStatus: 200,
			want: []string{"opiniones                    2 rows", "pedidos_descartados          0 rows"}},
		{name: "rows in the table's column order", method: "GET", path: "/tables/opiniones", wantStatus: 200,
			want: []string{
				`{"opinion_id":"O-1","sku":"MOCH-40L-AZ","fecha":"2026-03-14","puntuacion":5,"texto":"muy buena","pais":"ES","source_object":"gs://b/o.csv","source_generation":7,"source_line":2,"ingested_at":"2026-03-14T20:30:00Z"}`,
				`{"opinion_id":"O-2","sku":"GORRO-LANA-RJ","fecha":"2026-03-14","puntuacion":3,"texto":null,"pais":"FR","source_object":"gs://b/o.csv","source_generation":7,"source_line":3,"ingested_at":"2026-03-14T20:30:00Z"}`,
			}},
		{name: "a limit says how many rows are left", method: "GET", path: "/tables/opiniones?limit=1", wantStatus: 200,
			want: []string{`"opinion_id":"O-1"`, `{"more_rows":1,"hint":"?limit=1000 shows up to 1000"}`}},
		{name: "a limit out of bounds", method: "GET", path: "/tables/opiniones?limit=5000", wantStatus: 400, want: []string{"want a number from 1 to 1000"}},
		{name: "an unknown table names the known ones", method: "GET", path: "/tables/ventas", wantStatus: 404, want: []string{`no table "ventas": the tables are`, "opiniones"}},
		{name: "reading the clock", method: "GET", path: "/clock", wantStatus: 200, want: []string{"2026-03-14T20:30:00Z"}},
		{name: "moving the clock forward", method: "POST", path: "/clock?to=2026-03-14T22:00:00Z", wantStatus: 200, want: []string{"2026-03-14T22:00:00Z"}},
		{name: "never backwards", method: "POST", path: "/clock?to=2026-03-14T21:00:00Z", wantStatus: 409, want: []string{"clock moves forward only"}},
		{name: "a time it cannot read", method: "POST", path: "/clock?to=tomorrow", wantStatus: 400, want: []string{"want a time such as"}},
		{name: "writing a table is not offered", method: "POST", path: "/tables/opiniones", wantStatus: 405, want: []string{"use GET"}},
		{name: "a web page is refused", method: "GET", path: "/tables", header: map[string]string{"Origin": "https://example.com"}, wantStatus: 403, want: []string{"refused"}},
		{name: "a rebound DNS name is refused", method: "GET", path: "/tables", header: map[string]string{"Host": "evil.example:80"}, wantStatus: 403, want: []string{"is not this machine"}},
		{name: "an unknown path", method: "GET", path: "/etc/passwd", wantStatus: 404, want: []string{"GET / is the dashboard"}},
		{name: "the dashboard page", method: "GET", path: "/", wantStatus: 200, want: []string{"<html"}},
		{name: "the page's own fetch", method: "GET", path: dashboard.APIPath, header: map[string]string{"Sec-Fetch-Site": "same-origin"}, wantStatus: 200, want: []string{`"monitor":{`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			check(t, err)
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			check(t, err)
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			check(t, err)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("%s %s: HTTP %d, want %d: %s", tt.method, tt.path, resp.StatusCode, tt.wantStatus, b)
			}
			rest := string(b)
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("%s %s: answer lacks %q (in order):\n%s", tt.method, tt.path, w, b)
					break
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestRatText(t *testing.T) {
	// A row's NUMERIC goes out as an exact string.
	row, err := rowJSON([]warehouse.Field{{Name: "importe", Type: "NUMERIC"}}, map[string]any{"importe": big.NewRat(8990, 100)})
	check(t, err)
	checkTexts(t, []textCase{
		{name: "integer", got: ratText(big.NewRat(135, 1)), want: "135"},
		{name: "cents", got: ratText(big.NewRat(8990, 100)), want: "89.9"},
		{name: "nine places", got: ratText(big.NewRat(1, 1_000_000_000)), want: "0.000000001"},
		{name: "negative", got: ratText(big.NewRat(-455, 10)), want: "-45.5"},
		{name: "rowJSON", got: string(row), want: `{"importe":"89.9"}`},
	})
}

// TestConsoleMonitoringPanel: the console's dashboard answers the
// monitoring panel from the processes' own JSON log lines, as the
// log-based metrics read them in production: after an order, an invalid
// message and a tick, the dead letter in the minute of the publish, the
// tick's data freshness, and the backlog of a message AggregateOrders
// keeps refusing.
func TestConsoleMonitoringPanel(t *testing.T) {
	t.Parallel()
	s := need(t, Options{})
	ctx := testContext(t, 2*time.Minute)
	srv := httptest.NewServer(console(t, s))
	defer srv.Close()

	setClock(t, s, storyStart.Add(5*time.Minute)) // 17:05
	acked(ctx, t, s, publish(ctx, t, s, []byte(stormOrder), orderTime))
	acked(ctx, t, s, publish(ctx, t, s, []byte(`{"pedido_id":"P-BAD","pais":"ES","importe_total":"mucho","lineas":[]}`), orderTime))
	// A log line reaches the Monitor after the answer went out: it is
	// counted in the minute it is read, so the clock waits for it.
	accepted := func(ms dashboard.MinuteSample) int64 { return ms.Accepted }
	m := panel(ctx, t, srv.URL, func(m dashboard.Monitoring) bool {
		return sum(m, deadLetters) == 1 && sum(m, accepted) == 1
	})
	at := []string{minuteOf(m, deadLetters), minuteOf(m, accepted)}
	if !slices.Equal(at, []string{"17:05", "17:05"}) {
		t.Errorf("dead letter, accepted order in minutes %q, want 17:05 (the publish); minutes %+v", at, m.Minutes)
	}

	tickAt := storyStart.Add(30 * time.Minute) // 17:30
	setClock(t, s, tickAt)
	res := fireTick(ctx, t, s)
	var want int64 = -1
	for _, a := range res.Aggregations {
		if a.Aggregation == dashboard.DefaultAggregation && !a.Watermark.IsZero() {
			want = int64(tickAt.Sub(a.Watermark) / time.Second)
		}
	}
	if want < 0 {
		t.Fatalf("the tick moved no watermark of %s: %+v", dashboard.DefaultAggregation, res)
	}
	m = panel(ctx, t, srv.URL, func(m dashboard.Monitoring) bool {
		n := len(m.Minutes)
		return n > 0 && m.Minutes[n-1].FreshnessSeconds != nil && m.Now.FreshnessSeconds != nil
	})
	last := m.Minutes[len(m.Minutes)-1]
	t.Logf("panel at %s: freshness %d s, system lag %d s, %d dead letter(s); now: freshness %d s, system lag %d s", hhmm(last.At), *last.FreshnessSeconds, last.SystemLagSeconds, sum(m, deadLetters), *m.Now.FreshnessSeconds, m.Now.SystemLagSeconds)
	// The order accepted at 17:05 waited 25 minutes for the tick that folded it.
	if last.SystemLagSeconds != 25*60 {
		t.Errorf("system lag in minute %s = %d s, want %d s (accepted 17:05, folded 17:30)", hhmm(last.At), last.SystemLagSeconds, 25*60)
	}
	if hhmm(last.At) != "17:30" || *last.FreshnessSeconds != want || *m.Now.FreshnessSeconds != want {
		t.Errorf("freshness: minute %s %d s, now %d s; want %d s at 17:30 (17:30 - W)", hhmm(last.At), *last.FreshnessSeconds, *m.Now.FreshnessSeconds, want)
	}

	// The sales bars: the dashboard's named read through the production
	// BigQuery adapter, run by the emulator's GoogleSQL on the panes the
	// ticks streamed (a second tick, should the first one have owed the
	// EARLY pane its early delay).
	setClock(t, s, tickAt.Add(2*time.Minute))
	fireTick(ctx, t, s)
	snap := snapshot(ctx, t, srv.URL, func(snap dashboard.Snapshot) bool { return len(snap.Bars) > 0 })
	got := snap.Bars[0]
	if got.Pais != "ES" || got.Importe.String() != "89.9" || got.Pedidos != 1 || got.Unidades != 1 || len(snap.Bars) != 1 {
		t.Errorf("bars %+v, want one of ES: 89.90, 1 order, 1 unit (P-STORM)", snap.Bars)
	}

	// A message AggregateOrders' front end refuses waits in the backlog.
	fe := s.Frontends["AggregateOrders"]
	fe.Inject(matchPedido("P-WAIT"), Refuse, -1)
	waiting := publish(ctx, t, s, []byte(strings.Replace(stormOrder, "P-STORM", "P-WAIT", 1)), orderTime)
	if _, err := fe.Wait(ctx, waitTimeout, func(r Request) bool { id, _ := Pushed(r.Body); return id == waiting }); err != nil {
		t.Fatal(err)
	}
	m = panel(ctx, t, srv.URL, func(m dashboard.Monitoring) bool { return m.Backlog != nil })
	if m.Backlog.Undelivered != 1 || m.BacklogNote != "" {
		t.Errorf("backlog %+v, note %q: want the refused message, and no note", *m.Backlog, m.BacklogNote)
	}
}

func console(t *testing.T, s *Stack) *Console {
	t.Helper()
	c, err := NewConsole(s)
	check(t, err)
	return c
}

func deadLetters(ms dashboard.MinuteSample) int64 { return ms.DeadLetters }

func sum(m dashboard.Monitoring, of func(dashboard.MinuteSample) int64) int64 {
	var n int64
	for _, ms := range m.Minutes {
		n += of(ms)
	}
	return n
}

// minuteOf is the first minute in which of counts something.
func minuteOf(m dashboard.Monitoring, of func(dashboard.MinuteSample) int64) string {
	for _, ms := range m.Minutes {
		if of(ms) > 0 {
			return hhmm(ms.At)
		}
	}
	return ""
}

// panel polls the console's dashboard snapshot, as the page does, until
// its monitoring panel satisfies ok.
func panel(ctx context.Context, t *testing.T, console string, ok func(dashboard.Monitoring) bool) dashboard.Monitoring {
	t.Helper()
	snap := snapshot(ctx, t, console, func(snap dashboard.Snapshot) bool {
		if snap.Monitor == nil {
			t.Fatalf("no monitoring panel in the console's snapshot: %+v", snap)
		}
		return ok(*snap.Monitor)
	})
	return *snap.Monitor
}

// snapshot polls the console's dashboard snapshot until ok.
func snapshot(ctx context.Context, t *testing.T, console string, ok func(dashboard.Snapshot) bool) dashboard.Snapshot {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		var snap dashboard.Snapshot
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, console+dashboard.APIPath, nil)
		check(t, err)
		resp, err := http.DefaultClient.Do(req)
		check(t, err)
		err = json.NewDecoder(resp.Body).Decode(&snap)
		resp.Body.Close()
		check(t, err)
		if ok(snap) {
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console's snapshot did not show it within %s: %+v", waitTimeout, snap)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
