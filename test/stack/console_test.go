package stack

import (
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// consoleStack is the part of a Stack the console reads: the BigQuery
// fake and a test clock; it needs no emulator.
func consoleStack(t *testing.T) *Stack {
	t.Helper()
	f, err := bqfake.New(bqfake.Options{Project: "p", Dataset: "d"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 14, 20, 30, 0, 0, time.UTC)
	file := filepath.Join(t.TempDir(), "clock")
	if err := clock.Set(file, start); err != nil {
		t.Fatal(err)
	}
	return &Stack{BigQuery: f, clockFile: file, now: start}
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
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := len(s.BigQuery.Rows("opiniones")); n != 2 {
		t.Fatalf("insertAll: opiniones has %d rows, want 2: HTTP %d %s", n, resp.StatusCode, body)
	}

	srv := httptest.NewServer(NewConsole(s))
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
		{name: "an unknown path", method: "GET", path: "/etc/passwd", wantStatus: 404, want: []string{"GET /tables lists"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
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
	tests := []struct {
		name string
		in   *big.Rat
		want string
	}{
		{name: "integer", in: big.NewRat(135, 1), want: "135"},
		{name: "cents", in: big.NewRat(8990, 100), want: "89.9"},
		{name: "nine places", in: big.NewRat(1, 1_000_000_000), want: "0.000000001"},
		{name: "negative", in: big.NewRat(-455, 10), want: "-45.5"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ratText(tt.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	// A row's NUMERIC goes out as an exact string.
	got, err := rowJSON([]warehouse.Field{{Name: "importe", Type: "NUMERIC"}}, map[string]any{"importe": big.NewRat(8990, 100)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"importe":"89.9"}`, string(got)); diff != "" {
		t.Errorf("rowJSON (-want +got):\n%s", diff)
	}
}
