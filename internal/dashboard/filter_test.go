package dashboard_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

func TestParseFilter(t *testing.T) {
	tests := []struct {
		name    string
		query   string
		want    dashboard.Filter
		wantErr string
	}{
		{name: "none", query: "", want: dashboard.Filter{}},
		{name: "countries, listed or repeated, upper-cased, sorted, once each", query: "pais=pt,ES&pais=es&pais=",
			want: dashboard.Filter{Paises: []string{"ES", "PT"}}},
		{name: "a range of days", query: "from=2026-03-01&to=2026-03-14", want: dashboard.Filter{From: day(1), To: day(14)}},
		{name: "one side", query: "from=2026-03-14", want: dashboard.Filter{From: day(14)}},
		{name: "a code that could escape the literal", query: "pais=E'", wantErr: `pais: E' is not a two-letter country code such as ES`},
		{name: "a name, not a code", query: "pais=Spain", wantErr: `pais: SPAIN is not a two-letter country code such as ES`},
		{name: "a local time", query: "from=14/03/2026", wantErr: `from: 14/03/2026 is not a date YYYY-MM-DD`},
		{name: "no such month", query: "from=2026-14-03", wantErr: `from: 2026-14-03 is not a date YYYY-MM-DD`},
		{name: "backwards", query: "from=2026-03-14&to=2026-03-01", wantErr: "to: 2026-03-01 is before from 2026-03-14"},
		{name: "too long", query: "from=2026-01-01&to=2026-03-14", wantErr: "to: 2026-01-01 to 2026-03-14 is 73 days, at most 62"},
		{name: "an end past the warehouse's last timestamp", query: "to=9999-12-31", wantErr: "to: 9999-12-31 is outside 0001-01-01 to 9999-12-30, the days a range can hold (the warehouse's timestamps end at 9999-12-31T23:59:59.999999Z)"},
		{name: "a start before the first one", query: "from=0000-12-31", wantErr: "from: 0000-12-31 is outside 0001-01-01 to 9999-12-30, the days a range can hold (the warehouse's timestamps end at 9999-12-31T23:59:59.999999Z)"},
		{name: "the last day a range can hold", query: "from=9999-12-30&to=9999-12-30", want: dashboard.Filter{From: time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC), To: time.Date(9999, 12, 30, 0, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dashboard.ParseFilter(q)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				var fe *dashboard.FilterError
				if !errors.As(err, &fe) || !strings.HasPrefix(tt.wantErr, fe.Param+": ") {
					t.Errorf("error %#v does not name its parameter", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFilterInQuery: the API's filter reaches the bars read and the
// discard summary as typed parameters (UTC bounds, the countries; the
// DuckDB run is in the engine test), every read bounded below on its
// table's partitioning column, and a bad filter is a 400 that says what is
// wrong.
func TestFilterInQuery(t *testing.T) {
	all := []string{}
	// Without from, the last 24 hours of processing time (now is
	// 2026-03-14T18:22:30Z); the discards always so.
	const dayAgo = "2026-03-13T18:22:30Z"
	const open = "9999-12-31T23:59:59.999999Z"
	// reads are a read's parameters, as text.
	reads := func(agg, maxWindows, anyKey string, keys []string, start, end string) map[string][]string {
		return map[string][]string{"aggregation": {agg}, "max_windows": {maxWindows}, "any_key": {anyKey}, "keys": keys,
			"start_time": {start}, "end_time": {end}}
	}
	summary := func(agg, start, end string) map[string][]string {
		return map[string][]string{"aggregation": {agg}, "max_latest": {"5"}, "since": {dayAgo}, "start_time": {start}, "end_time": {end}}
	}
	tests := []struct {
		name       string
		query      string
		status     int
		want       map[string][]string // the bars read's parameters, as text
		body       string              // a substring of the 400's body
		wantFilter *dashboard.Filter
		wantRange  dashboard.Range
		read       string // the bars read; "" is newest_windows
	}{
		{
			name: "default view: the last 24 hours", query: "", status: 200,
			want:      reads("ventas_hora_pais", "24", "1", all, dayAgo, open),
			wantRange: lastDay(now),
		},
		{
			name: "range and countries", query: "?pais=PT,ES&from=2026-03-01&to=2026-03-14", status: 200,
			want:       reads("ventas_hora_pais", "1488", "0", []string{"ES", "PT"}, "2026-03-01T00:00:00Z", "2026-03-15T00:00:00Z"),
			wantFilter: &dashboard.Filter{Paises: []string{"ES", "PT"}, From: day(1), To: day(14)},
			wantRange:  dashboard.Range{From: day(1), Until: ptr(day(15))},
		},
		{
			name: "from alone: from that day on, as the person chose", query: "?from=2026-03-01", status: 200,
			want:       reads("ventas_hora_pais", "1488", "1", all, "2026-03-01T00:00:00Z", open),
			wantFilter: &dashboard.Filter{From: day(1)},
			wantRange:  dashboard.Range{From: day(1)},
		},
		{
			name: "to alone: the 62 days that end with it, an explicit range's limit", query: "?to=2026-03-14", status: 200,
			want:       reads("ventas_hora_pais", "1488", "1", all, "2026-01-12T00:00:00Z", "2026-03-15T00:00:00Z"),
			wantFilter: &dashboard.Filter{To: day(14)},
			wantRange:  dashboard.Range{From: time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC), Until: ptr(day(15))},
		},
		{
			name: "the SKU aggregation, read by its own view and key", query: "?aggregation=ventas_sku_hora_movil&key=MOCH-40L-AZ", status: 200,
			read:       "newest_windows:ventas_sku_hora_movil",
			want:       reads("ventas_sku_hora_movil", "96", "0", []string{"MOCH-40L-AZ"}, dayAgo, open),
			wantFilter: &dashboard.Filter{Keys: []string{"MOCH-40L-AZ"}},
			wantRange:  lastDay(now),
		},
		{
			name: "a key filter on ventas_hora_pais is a country filter", query: "?key=FR&pais=ES", status: 200,
			want:       reads("ventas_hora_pais", "24", "0", []string{"ES", "FR"}, dayAgo, open),
			wantFilter: &dashboard.Filter{Paises: []string{"ES"}, Keys: []string{"FR"}},
			wantRange:  lastDay(now),
		},
		{name: "an unknown aggregation", query: "?aggregation=ventas_2d_pais", status: 400,
			body: `{"param":"aggregation","error":"aggregation: \"ventas_2d_pais\" is not a declared aggregation (want one of ventas_hora_pais, ventas_sku_hora_movil)"}`},
		{name: "an aggregation name that could escape", query: "?aggregation=x%27%20OR%20%271%27%3D%271", status: 400, body: `"param":"aggregation"`},
		{name: "a country filter on the SKU aggregation", query: "?aggregation=ventas_sku_hora_movil&pais=ES", status: 400,
			body: `{"param":"pais","error":"pais: aggregation ventas_sku_hora_movil is keyed by sku, not by country: filter it with key"}`},
		{name: "a key that is no country on ventas_hora_pais", query: "?key=MOCH-40L-AZ", status: 400, body: `"param":"key"`},
		{name: "a bad key", query: "?aggregation=ventas_sku_hora_movil&key=a%27b", status: 400, body: `"param":"key"`},
		{name: "bad day", query: "?to=yesterday", status: 400, body: `{"param":"to","error":"to: yesterday is not a date YYYY-MM-DD"}`},
		{
			name: "to alone near the first day: from the warehouse's first timestamp", query: "?to=0001-01-05", status: 200,
			want:       reads("ventas_hora_pais", "1488", "1", all, "0001-01-01T00:00:00Z", "0001-01-06T00:00:00Z"),
			wantFilter: &dashboard.Filter{To: time.Date(1, 1, 5, 0, 0, 0, 0, time.UTC)},
			wantRange:  dashboard.Range{From: warehouse.MinTime, Until: ptr(time.Date(1, 1, 6, 0, 0, 0, 0, time.UTC))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wh := &fakeWarehouse{res: viewResult(goodRows...)}
			h := dashboard.Handler(dashboard.Source{Warehouse: wh, Now: func() time.Time { return now },
				Aggregations: []string{"ventas_hora_pais", "ventas_sku_hora_movil"}})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, dashboard.APIPath+tt.query, nil))
			if rec.Code != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status != http.StatusOK {
				if !strings.Contains(rec.Body.String(), tt.body) {
					t.Errorf("body lacks %q:\n%s", tt.body, rec.Body)
				}
				return
			}
			var snap dashboard.Snapshot
			check(t, json.Unmarshal(rec.Body.Bytes(), &snap))
			read := tt.read
			if read == "" {
				read = "newest_windows"
			}
			type asked struct {
				Filter            *dashboard.Filter
				Range             dashboard.Range
				BarsRead, Summary map[string][]string
			}
			// The summary reads the bars' aggregation and range.
			want := asked{Filter: tt.wantFilter, Range: tt.wantRange, BarsRead: tt.want,
				Summary: summary(tt.want["aggregation"][0], tt.want["start_time"][0],
					tt.want["end_time"][0])}
			got := asked{Filter: snap.Filter, Range: snap.Range, BarsRead: params(t, wh, read),
				Summary: params(t, wh, "discard_summary")}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("snapshot's filter and range, reads' parameters (-want +got):\n%s", diff)
			}
		})
	}
}

// params are the parameters of wh's one read called name, as text.
func params(t *testing.T, wh *fakeWarehouse, name string) map[string][]string {
	t.Helper()
	var got map[string][]string
	for _, s := range wh.stmts {
		if s.Name() != name {
			continue
		}
		if got != nil {
			t.Fatalf("two %s reads, want one", name)
		}
		got = map[string][]string{}
		for _, p := range s.Params() {
			got[p.Name] = []string{}
			for _, v := range p.Values {
				got[p.Name] = append(got[p.Name], warehouse.FormatParam(p.Type, v))
			}
		}
	}
	if got == nil {
		t.Fatalf("no %s read", name)
	}
	return got
}
