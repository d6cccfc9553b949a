//go:build cgo

// The tests against a real warehouse need DuckDB, hence cgo; the codec
// tests beside them also run with CGO_ENABLED=0, as cmd/server builds.

package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

var (
	_ warehousetest.Warehouse = (*Client)(nil)
	_ Backend                 = (*duckdb.Warehouse)(nil)
)

// mount is where `alpipe serve` mounts the handler.
const mount = "/_local/warehouse"

// rig is a Client talking to a Handler over an in-memory DuckDB, mounted
// the way the local server mounts it.
type rig struct {
	client *Client
	wh     *duckdb.Warehouse
	srv    *httptest.Server
}

func newRig(t *testing.T, opt duckdb.Options, wrap func(Backend) Backend) *rig {
	t.Helper()
	opt.TempDir = t.TempDir()
	wh, err := duckdb.Open("", opt)
	if err != nil {
		t.Fatalf("open DuckDB: %v", err)
	}
	var b Backend = wh
	if wrap != nil {
		b = wrap(wh)
	}
	mux := http.NewServeMux()
	mux.Handle(mount+"/", http.StripPrefix(mount, Handler(b)))
	srv := httptest.NewServer(mux)
	c, err := New(srv.URL+mount, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		if err := wh.Close(); err != nil {
			t.Errorf("close DuckDB: %v", err)
		}
	})
	return &rig{client: c, wh: wh, srv: srv}
}

func TestConformance(t *testing.T) {
	warehousetest.Run(t, func(t *testing.T) warehousetest.Warehouse {
		return newRig(t, duckdb.Options{}, nil).client
	})
	t.Run("discarding view", func(t *testing.T) {
		warehousetest.RunView(t, warehouse.Discarding, newRig(t, duckdb.Options{Accumulation: warehouse.Discarding}, nil).client)
		warehousetest.RunReads(t, func(t *testing.T) warehousetest.Warehouse {
			return newRig(t, duckdb.Options{Accumulation: warehouse.Discarding}, nil).client
		}, warehouse.Discarding)
	})
}

// taggedLines returns n valid lineas_pedido rows of one file, tagged.
func taggedLines(t testing.TB, tag string, n int) [][]warehouse.Value {
	t.Helper()
	tbl, err := warehouse.Lookup(warehouse.LineasPedido)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 15, 2, 0, 0, 123456000, time.UTC)
	rows := make([][]warehouse.Value, n)
	for i := range rows {
		row := make([]warehouse.Value, len(tbl.Schema))
		set := func(col string, v warehouse.Value) { row[tbl.Column(col)] = v }
		set("pedido_id", warehouse.StringValue(fmt.Sprintf("%s-P%d", tag, i)))
		set("linea", warehouse.IntValue(1))
		set("fecha", warehouse.DateValue(20526))
		set("sku", warehouse.StringValue(tag+"-MOCH"))
		set("cantidad", warehouse.IntValue(2))
		set("precio_unitario", warehouse.DecValue(numeric.FromNanos(89_900_000_000)))
		set("cliente_id", warehouse.NullValue())
		set("pais", warehouse.StringValue("ES"))
		set("importe", warehouse.DecValue(numeric.FromNanos(179_800_000_000)))
		set("source_object", warehouse.StringValue("gs://landing/"+tag+".csv"))
		set("source_generation", warehouse.IntValue(1712345678901234))
		set("source_line", warehouse.IntValue(int64(i+2)))
		set("ingested_at", warehouse.TimeValue(at))
		rows[i] = row
	}
	return rows
}

// rowsSource is a RowSource over rows; next, when set, runs before each row.
type rowsSource struct {
	rows  [][]warehouse.Value
	i     int
	next  func(i int) error
	err   error
	nexts atomic.Int64
}

func (s *rowsSource) Next() bool {
	s.nexts.Add(1)
	if s.err != nil || s.i >= len(s.rows) {
		return false
	}
	if s.next != nil {
		if s.err = s.next(s.i); s.err != nil {
			return false
		}
	}
	s.i++
	return true
}

func (s *rowsSource) Row() []warehouse.Value { return s.rows[s.i-1] }
func (s *rowsSource) Err() error             { return s.err }

func count(t *testing.T, c *Client, tag string) string {
	t.Helper()
	res, err := c.Query(context.Background(), "SELECT COUNT(*) FROM lineas_pedido WHERE pedido_id LIKE '"+tag+"-%'")
	if err != nil {
		t.Fatalf("count: %v", err)
	}
	return res.Rows[0][0]
}

// A load whose context ends midway must fail with the context's error and
// leave no row, and the ID must stay usable.
func TestLoadCancelledMidwayCommitsNothing(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	const tag = "cancel"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Enough rows that the body cannot be sent before the cancel lands.
	src := &rowsSource{rows: taggedLines(t, tag, 200_000), next: func(i int) error {
		if i == 1000 {
			cancel()
		}
		return nil
	}}
	_, err := r.client.Load(ctx, warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: src})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Load cancelled midway: got %v, want an error wrapping context.Canceled", err)
	}
	if got := count(t, r.client, tag); got != "0" {
		t.Errorf("%s rows visible after a cancelled load, want 0", got)
	}
	res, err := r.client.Load(context.Background(), warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: &rowsSource{rows: taggedLines(t, tag, 3)}})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if diff := cmp.Diff(warehouse.LoadResult{Rows: 3}, res); diff != "" {
		t.Errorf("retry (-want +got)\n%s", diff)
	}
}

// The source is handed back to the caller when Load returns: the transport
// must not read it any more, even when the server answered before the body
// was through.
func TestLoadLeavesTheSourceAloneOnceItReturns(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	const tag = "early"
	rows := taggedLines(t, tag, 100_000)
	tbl, _ := warehouse.Lookup(warehouse.LineasPedido)
	rows[10][tbl.Column("sku")] = warehouse.NullValue() // the warehouse fails on it long before the end
	var returned atomic.Bool
	src := &rowsSource{rows: rows, next: func(int) error {
		if returned.Load() {
			t.Error("the source was read after Load returned")
		}
		return nil
	}}
	_, err := r.client.Load(context.Background(), warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: src})
	returned.Store(true)
	if err == nil {
		t.Fatal("Load with a NULL in a REQUIRED column succeeded")
	}
	time.Sleep(100 * time.Millisecond) // room for a stray read to show
	if got := count(t, r.client, tag); got != "0" {
		t.Errorf("%s rows visible, want 0", got)
	}
}

func TestBackendErrorsNameWhatFailed(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	ctx := context.Background()
	bad := taggedLines(t, "err", 2)
	tbl, _ := warehouse.Lookup(warehouse.LineasPedido)
	bad[1][tbl.Column("pais")] = warehouse.NullValue()
	tests := []struct {
		name     string
		call     func() error
		code     int
		contains []string
	}{
		{"query that is not a SELECT", func() error {
			_, err := r.client.Query(ctx, "DELETE FROM lineas_pedido")
			return err
		}, 500, []string{"remote warehouse: query: server answered 500", "only a single SELECT"}},
		{"query of an unknown table", func() error {
			_, err := r.client.Query(ctx, "SELECT * FROM nope")
			return err
		}, 500, []string{"nope"}},
		{"refresh of an unknown aggregate", func() error {
			return r.client.RefreshDaily(ctx, "no_such_aggregate", []int32{1})
		}, 500, []string{"refresh no_such_aggregate", "no_such_aggregate"}},
		{"load ID with a slash", func() error {
			_, err := r.client.Load(ctx, warehouse.Load{ID: "a/b", Table: warehouse.LineasPedido, Rows: &rowsSource{}})
			return err
		}, 500, []string{"load a/b into lineas_pedido", "only letters, digits"}},
		{"load with NULL in a REQUIRED column", func() error {
			_, err := r.client.Load(ctx, warehouse.Load{ID: "err-g1", Table: warehouse.LineasPedido, Rows: &rowsSource{rows: bad}})
			return err
		}, 500, []string{"load err-g1 into lineas_pedido", "pais"}},
		{"append without row IDs", func() error {
			return r.client.Append(ctx, warehouse.LineasPedido, []warehouse.Row{{Values: bad[0]}})
		}, 500, []string{"append 1 rows to lineas_pedido", "no ID"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("got %v (%T), want a *StatusError", err, err)
			}
			if se.Code != tc.code {
				t.Errorf("status %d, want %d (%v)", se.Code, tc.code, err)
			}
			for _, s := range tc.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

// recordQuery passes calls through and reports the error of every Query,
// to see what the server side of a call went through.
type recordQuery struct {
	Backend
	errs chan error
}

func (q recordQuery) Query(ctx context.Context, sql string) (warehouse.Result, error) {
	res, err := q.Backend.Query(ctx, sql)
	q.errs <- err
	return res, err
}

// Cancelling a call cancels it on the server too.
func TestQueryCancellationReachesTheServer(t *testing.T) {
	errs := make(chan error, 1)
	r := newRig(t, duckdb.Options{}, func(b Backend) Backend { return recordQuery{b, errs} })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	started := time.Now()
	_, err := r.client.Query(ctx, "SELECT COUNT(*) FROM range(1000000000000) a")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("query past its deadline: got %v, want an error wrapping context.DeadlineExceeded", err)
	}
	select {
	case serr := <-errs:
		if serr == nil {
			t.Error("the server's query finished successfully, want it interrupted")
		}
		if d := time.Since(started); d > 10*time.Second {
			t.Errorf("the server's query stopped after %s", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the server's query still runs 20 s after the client gave up")
	}
}

func TestCancelledContextFailsEveryCall(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := &rowsSource{rows: taggedLines(t, "dead", 1)}
	calls := map[string]func() error{
		"Load": func() error {
			_, err := r.client.Load(ctx, warehouse.Load{ID: "dead-g1", Table: warehouse.LineasPedido, Rows: src})
			return err
		},
		"RefreshDaily": func() error { return r.client.RefreshDaily(ctx, warehouse.VentasDiariasSKU, []int32{20526}) },
		"Append":       func() error { return r.client.Append(ctx, warehouse.PedidosDescartados, nil) },
		"Query": func() error {
			_, err := r.client.Query(ctx, "SELECT 1")
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, context.Canceled) {
				t.Errorf("got %v, want an error wrapping context.Canceled", err)
			}
		})
	}
	if n := src.nexts.Load(); n != 0 {
		t.Errorf("a cancelled Load read its source %d times", n)
	}
}

// post sends a raw request to the handler, as a client other than ours
// (or a broken one) would.
func post(t *testing.T, r *rig, path string, header http.Header, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+mount+"/"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func encodeLines(t *testing.T, rows [][]warehouse.Value) string {
	t.Helper()
	tbl, _ := warehouse.Lookup(warehouse.LineasPedido)
	c := mustCodec(t, tbl)
	var b []byte
	for _, row := range rows {
		var err error
		if b, err = c.appendRow(b, row); err != nil {
			t.Fatal(err)
		}
	}
	return string(b)
}

// Whatever way a body falls short, the handler's row source reports an
// error, so the warehouse commits nothing and the ID stays free.
func TestHandlerCommitsOnlyCompleteBodies(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	tbl, _ := warehouse.Lookup(warehouse.LineasPedido)
	schema := http.Header{schemaHeader: {fingerprint(tbl)}}
	tests := []struct {
		name   string
		body   func(tag string) string
		header http.Header
		code   int
		want   string
	}{
		{name: "ends without its end line", code: 400, want: "before its end line",
			body: func(tag string) string { return encodeLines(t, taggedLines(t, tag, 3)) }},
		{name: "cut inside a row", code: 400, want: "row 3",
			body: func(tag string) string { s := encodeLines(t, taggedLines(t, tag, 3)); return s[:len(s)-20] }},
		{name: "end line counts other rows", code: 400, want: "claiming 4 rows after 3",
			body: func(tag string) string { return encodeLines(t, taggedLines(t, tag, 3)) + `{"end":4}` + "\n" }},
		{name: "data after the end line", code: 400, want: "goes on after its end line",
			body: func(tag string) string {
				return encodeLines(t, taggedLines(t, tag, 3)) + `{"end":3}` + "\n" + encodeLines(t, taggedLines(t, tag+"x", 1))
			}},
		{name: "malformed row", code: 400, want: "row 2: column linea: expected an integer",
			body: func(tag string) string {
				lines := strings.SplitAfter(encodeLines(t, taggedLines(t, tag, 3)), "\n")
				lines[1] = strings.Replace(lines[1], `,1,`, `,"1",`, 1)
				return strings.Join(lines, "") + `{"end":3}` + "\n"
			}},
		{name: "row of the wrong width", code: 400, want: "row 1: 1 values for the 13 columns",
			body: func(string) string { return `["x"]` + "\n" + `{"end":1}` + "\n" }},
		{name: "no schema header", header: http.Header{}, code: 409, want: "run the same alpipe version",
			body: func(tag string) string { return encodeLines(t, taggedLines(t, tag, 1)) + `{"end":1}` + "\n" }},
		{name: "another schema", header: http.Header{schemaHeader: {"0123456789abcdef"}}, code: 409, want: `encoded for schema "0123456789abcdef"`,
			body: func(tag string) string { return encodeLines(t, taggedLines(t, tag, 1)) + `{"end":1}` + "\n" }},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tag := fmt.Sprintf("cut%d", i)
			h := tc.header
			if h == nil {
				h = schema
			}
			code, msg := post(t, r, "load?table=lineas_pedido&id="+tag+"-g1", h, strings.NewReader(tc.body(tag)))
			if code != tc.code || !strings.Contains(msg, tc.want) {
				t.Errorf("got %d %q, want %d and a message containing %q", code, msg, tc.code, tc.want)
			}
			if got := count(t, r.client, tag); got != "0" {
				t.Errorf("%s rows committed, want 0", got)
			}
			res, err := r.client.Load(context.Background(), warehouse.Load{ID: tag + "-g1", Table: warehouse.LineasPedido, Rows: &rowsSource{rows: taggedLines(t, tag, 2)}})
			if err != nil || res != (warehouse.LoadResult{Rows: 2}) {
				t.Errorf("load of the same ID afterwards: %+v, %v; want 2 rows", res, err)
			}
		})
	}
}

func TestHandlerRefusesOtherRequests(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		code   int
		want   string
	}{
		{"unknown endpoint", "POST", "drop", "", 404, "no warehouse endpoint"},
		{"GET of an endpoint", "GET", "query", "", 405, "use POST"},
		{"load into an unknown table", "POST", "load?table=nope&id=x", "", 400, `unknown table "nope"`},
		{"append to an unknown table", "POST", "append?table=nope", "", 400, `unknown table "nope"`},
		{"query without sql", "POST", "query", `{}`, 400, `{"sql": "..."}`},
		{"query that is not JSON", "POST", "query", `SELECT 1`, 400, "read request"},
		{"refresh with an unknown field", "POST", "refresh-daily", `{"aggregate":"ventas_diarias_sku","days":[1]}`, 400, "unknown field"},
		{"refresh with text dates", "POST", "refresh-daily", `{"aggregate":"ventas_diarias_sku","dates":["2026-03-14"]}`, 400, "read request"},
		// The read endpoint runs only the reads this binary registers,
		// with the parameters they declare: no SQL travels over it.
		{"read without a name", "POST", "read", `{}`, 400, `{"name": "...", "params": [...]}`},
		{"read of SQL instead of a name", "POST", "read", `{"name":"SELECT * FROM read_csv('/etc/passwd')","params":[]}`, 400, "no named read"},
		{"read with a missing parameter", "POST", "read", `{"name":"discard_counts","params":[]}`, 400, "parameters, want"},
		{"read with an unknown field", "POST", "read", `{"name":"discard_counts","sql":"SELECT 1"}`, 400, "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, r.srv.URL+mount+"/"+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.want) {
				t.Errorf("got %d %q, want %d and a message containing %q", resp.StatusCode, b, tc.code, tc.want)
			}
		})
	}
}

// Both ways of stripping the prefix reach the same endpoints.
func TestHandlerPathsWithAndWithoutLeadingSlash(t *testing.T) {
	wh, err := duckdb.Open("", duckdb.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	for _, prefix := range []string{mount, mount + "/"} {
		t.Run(prefix, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle(mount+"/", http.StripPrefix(prefix, Handler(wh)))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			c, err := New(srv.URL+mount+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Query(context.Background(), "SELECT 41 + 1 AS n")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(warehouse.Result{Columns: []string{"n"}, Rows: [][]string{{"42"}}}, res); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	tests := []struct {
		name string
		url  string
	}{
		{"empty", ""},
		{"no scheme", "127.0.0.1:8080/_local/warehouse"},
		{"another scheme", "ftp://127.0.0.1/_local/warehouse"},
		{"no host", "http:///_local/warehouse"},
		{"a query", "http://127.0.0.1:8080/_local/warehouse?x=1"},
		{"a fragment", "http://127.0.0.1:8080/_local/warehouse#x"},
		{"unparsable", "http://[::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if c, err := New(tc.url, nil); err == nil {
				t.Errorf("New(%q) = %+v, want an error", tc.url, c)
			}
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	c, err := New(url+mount, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := &rowsSource{rows: taggedLines(t, "down", 1)}
	_, err = c.Load(context.Background(), warehouse.Load{ID: "down-g1", Table: warehouse.LineasPedido, Rows: src})
	if err == nil || !strings.Contains(err.Error(), "remote warehouse: load down-g1 into lineas_pedido") {
		t.Errorf("Load against a closed port: got %v, want an error naming the load", err)
	}
	if n := src.nexts.Load(); n != 0 {
		t.Errorf("Load against a closed port read its source %d times", n)
	}
}

// Values cross in both directions exactly, through the real warehouse.
func TestAppendAndQueryExtremeValues(t *testing.T) {
	r := newRig(t, duckdb.Options{}, nil)
	ctx := context.Background()
	tbl, _ := warehouse.Lookup(warehouse.VentasHoraPaisPaneles)
	min, max := numeric.Min(), numeric.Max()
	row := func(id string, importe numeric.Dec, pedidos int64, ws time.Time) warehouse.Row {
		v := make([]warehouse.Value, len(tbl.Schema))
		set := func(col string, x warehouse.Value) { v[tbl.Column(col)] = x }
		set("aggregation", warehouse.StringValue("extremes"))
		set("window_start", warehouse.TimeValue(ws))
		set("window_end", warehouse.TimeValue(ws.Add(time.Hour)))
		set("pais", warehouse.StringValue("ÑÑ"))
		set("importe", warehouse.DecValue(importe))
		set("pedidos", warehouse.IntValue(pedidos))
		set("unidades", warehouse.IntValue(-pedidos))
		set("pane_index", warehouse.IntValue(0))
		set("timing", warehouse.StringValue("ON_TIME"))
		set("accumulation", warehouse.StringValue(warehouse.Accumulating))
		set("watermark", warehouse.TimeValue(ws))
		set("emitted_at", warehouse.TimeValue(ws))
		return warehouse.Row{ID: id, Values: v}
	}
	rows := []warehouse.Row{
		row("max", max, 1<<63-1, time.Date(9999, 12, 31, 22, 59, 59, 999999000, time.UTC)),
		row("min", min, -1<<63+1, time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC)),
	}
	if err := r.client.Append(ctx, warehouse.VentasHoraPaisPaneles, rows); err != nil {
		t.Fatalf("Append: %v", err)
	}
	res, err := r.client.Query(ctx, "SELECT importe, pedidos, unidades, window_start, pais FROM ventas_hora_pais_paneles WHERE aggregation = 'extremes' ORDER BY importe")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"-99999999999999999999999999999.999999999", "-9223372036854775807", "9223372036854775807", "0001-01-01T00:00:00.000001Z", "ÑÑ"},
		{"99999999999999999999999999999.999999999", "9223372036854775807", "-9223372036854775807", "9999-12-31T22:59:59.999999Z", "ÑÑ"},
	}
	if diff := cmp.Diff(want, res.Rows); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
