package local

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/replay/replaytest"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// counting is a warehouse that makes up n rows one at a time, each cell
// cell; after stallAfter rows (if set) it waits for ctx, as an engine busy
// on a slow scan does.
type counting struct {
	n, stallAfter int
	cell          string
	// each, if set, runs before every row (the memory test samples there).
	each func(i int)
}

func (c counting) QueryRows(ctx context.Context, _ string, sink warehouse.RowSink) error {
	if err := sink.Columns([]string{"i", "s"}); err != nil {
		return err
	}
	row := make([]string, 2)
	for i := range c.n {
		if c.stallAfter > 0 && i == c.stallAfter {
			<-ctx.Done()
			return fmt.Errorf("query: %w", ctx.Err())
		}
		if c.each != nil {
			c.each(i)
		}
		row[0], row[1] = fmt.Sprint(i), c.cell
		if err := sink.Row(row); err != nil {
			return err
		}
	}
	return nil
}

// streamer is a Querier of a fake that only streams: the handler asks for no more.
type streamer struct{ warehouse.RowStreamer }

func (streamer) Query(context.Context, string) (warehouse.Result, error) { panic("not streamed") }

func streamingHandler(q warehouse.RowStreamer, caps config.Query) *queryHandler {
	h := newQueryHandler(func() warehouse.Querier { return streamer{q} }, logging.Discard())
	h.caps = caps
	return h
}

func queryServer(t *testing.T, q warehouse.RowStreamer, caps config.Query) client.Server {
	t.Helper()
	ts := httptest.NewServer(streamingHandler(q, caps))
	t.Cleanup(ts.Close)
	return client.Server{URL: ts.URL}
}

// TestQueryCaps: every cap stops the answer with an error that names its
// variable, and a reader never takes a stopped answer for a whole one; the
// client's own max_rows is no error but "more exist".
func TestQueryCaps(t *testing.T) {
	caps := config.Query{MaxRows: 10, MaxBytes: 1024, Timeout: time.Minute}
	tests := []struct {
		name     string
		wh       counting
		caps     config.Query
		maxRows  int64
		wantRows int
		wantMore bool
		wantErr  string // "" for a whole answer
	}{
		{name: "under every cap", wh: counting{n: 7, cell: "x"}, caps: caps, wantRows: 7},
		{name: "exactly the row cap is whole", wh: counting{n: 10, cell: "x"}, caps: caps, wantRows: 10},
		{name: "one row past the row cap", wh: counting{n: 11, cell: "x"}, caps: caps, wantRows: 10, wantErr: "answer stopped at 10 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "byte cap", wh: counting{n: 10, cell: strings.Repeat("y", 300)}, caps: caps, wantRows: 3, wantErr: "ALPIPE_QUERY_MAX_BYTES"},
		{name: "column names past the byte cap", wh: counting{n: 1, cell: "x"}, caps: config.Query{MaxRows: 10, MaxBytes: 5, Timeout: time.Minute}, wantErr: "answer stopped before its first row: its 2 column names take 22 bytes, more than 5: ALPIPE_QUERY_MAX_BYTES"},
		{name: "client's max_rows with more rows", wh: counting{n: 11, cell: "x"}, caps: caps, maxRows: 4, wantRows: 4, wantMore: true},
		{name: "client's max_rows at the cap, more rows", wh: counting{n: 11, cell: "x"}, caps: caps, maxRows: 10, wantRows: 10, wantMore: true},
		{name: "client's max_rows, no more rows", wh: counting{n: 4, cell: "x"}, caps: caps, maxRows: 4, wantRows: 4},
		{name: "client's max_rows above the cap", wh: counting{n: 1, cell: "x"}, caps: caps, maxRows: 11, wantErr: "max_rows 11 is above this server's cap of 10 rows: ALPIPE_QUERY_MAX_ROWS"},
		{name: "timeout after the first rows", wh: counting{n: 10, stallAfter: 2, cell: "x"}, caps: config.Query{MaxRows: 10, MaxBytes: 1024, Timeout: 50 * time.Millisecond}, wantRows: 2, wantErr: "query cancelled after 50ms: ALPIPE_QUERY_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := queryServer(t, tt.wh, tt.caps)
			var got warehouse.Collect
			more, err := srv.QueryRows(t.Context(), "SELECT", tt.maxRows, &got)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(gotErr, tt.wantErr) {
				t.Fatalf("error %q, want one containing %q", gotErr, tt.wantErr)
			}
			if got.Result.Columns != nil && (err != nil) != errors.Is(err, localapi.ErrIncomplete) {
				t.Errorf("error %v after the head does not wrap ErrIncomplete", err)
			}
			if diff := cmp.Diff([]any{tt.wantRows, tt.wantMore}, []any{len(got.Result.Rows), more}); diff != "" {
				t.Errorf("rows, more (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryTimeoutCancelsDuckDB: a query that would run for minutes is
// interrupted in the engine when ALPIPE_QUERY_TIMEOUT passes, and the
// client is told which setting stopped it.
func TestQueryTimeoutCancelsDuckDB(t *testing.T) {
	srv := queryServer(t, replaytest.OpenWarehouse(t), config.Query{MaxRows: 10, MaxBytes: 1 << 20, Timeout: 200 * time.Millisecond})
	start := time.Now()
	_, err := srv.QueryRows(t.Context(), "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b", 0, &warehouse.Collect{})
	took := time.Since(start)
	var qe *client.QueryError
	if !errors.As(err, &qe) || qe.Status != http.StatusGatewayTimeout || !strings.Contains(qe.Msg, "query cancelled after 200ms: ALPIPE_QUERY_TIMEOUT") {
		t.Errorf("error %v, want HTTP 504 naming the timeout", err)
	}
	// 10^12 products take DuckDB minutes on two cores; 30 s is only a
	// bound that proves the engine stopped, far above the interrupt's delay.
	if took > 30*time.Second {
		t.Errorf("the cancelled query answered after %s", took)
	}
	// The engine is free again: the connection was given back.
	if _, err := srv.Query(t.Context(), "SELECT 1"); err != nil {
		t.Errorf("a query after the timeout: %v", err)
	}
}

// recording refuses SQL that starts with refuse and records every
// statement it is asked to run.
type recording struct {
	counting
	refuse string
	sqls   *[]string
}

func (r recording) QueryRows(ctx context.Context, sql string, sink warehouse.RowSink) error {
	*r.sqls = append(*r.sqls, sql)
	if r.refuse != "" && strings.HasPrefix(sql, r.refuse) {
		return errors.New("syntax error")
	}
	return r.counting.QueryRows(ctx, sql, sink)
}

// TestQueryAsksTheEngineForNoMoreThanItMaySend: DuckDB's driver holds a
// whole result before the first row is read, so the server wraps the query
// in a LIMIT of what the answer may need, and runs it as sent when it
// cannot be wrapped (SHOW, DESCRIBE). SQL of several statements is refused
// before the engine sees it, in words that say what to do, not DuckDB's
// "missing context for multi-statement query: try using PrepareContext".
func TestQueryAsksTheEngineForNoMoreThanItMaySend(t *testing.T) {
	caps := config.Query{MaxRows: 10, MaxBytes: 1024, Timeout: time.Minute}
	tests := []struct {
		name    string
		sql     string
		maxRows int64
		refuse  string
		want    []string // the statements run
		wantErr string   // an HTTP 400's message; "" for none
	}{
		{name: "the cap and one", sql: "SELECT i FROM t -- all of them;\n ;", want: []string{"SELECT * FROM (\nSELECT i FROM t -- all of them\n) AS q LIMIT 11"}},
		{name: "the client's max_rows and one", sql: "SELECT 1", maxRows: 3, want: []string{"SELECT * FROM (\nSELECT 1\n) AS q LIMIT 4"}},
		{name: "a trailing ';' and comment are not a second statement", sql: "SELECT 1; -- done\n", want: []string{"SELECT * FROM (\nSELECT 1\n) AS q LIMIT 11"}},
		{name: "not wrappable: as sent", sql: "SHOW TABLES", refuse: "SELECT * FROM (", want: []string{"SELECT * FROM (\nSHOW TABLES\n) AS q LIMIT 11", "SHOW TABLES"}},
		{name: "two selects", sql: "SELECT 1; SELECT 2", wantErr: "one statement at a time: this SQL holds 2 statements separated by ';'; send them one by one"},
		{name: "only a semicolon", sql: " ; -- nothing", wantErr: "no statement: the SQL holds only blanks, comments or ';'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sqls []string
			srv := queryServer(t, recording{counting: counting{n: 1, cell: "x"}, refuse: tt.refuse, sqls: &sqls}, caps)
			_, err := srv.QueryRows(t.Context(), tt.sql, tt.maxRows, &warehouse.Collect{})
			var qe *client.QueryError
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (!errors.As(err, &qe) || qe.Status != http.StatusBadRequest || qe.Error() != tt.wantErr) {
				t.Fatalf("error %v, want an HTTP 400 saying %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, sqls); diff != "" {
				t.Errorf("statements run (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQueryAnswerStreams: an answer far larger than the memory it may use
// goes out while the rows are made, never held: the heap, sampled while the
// rows are produced, stays a small fraction of the bytes sent.
func TestQueryAnswerStreams(t *testing.T) {
	const rows, cellLen = 400_000, 500 // 200 MB of answer
	var peak uint64
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	wh := counting{n: rows, cell: strings.Repeat("z", cellLen), each: func(i int) {
		if i%20_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}}
	h := streamingHandler(wh, config.Query{MaxRows: rows, MaxBytes: 1 << 30, Timeout: time.Minute})
	w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
	w.Body = nil // counted, not kept
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/_local/query", strings.NewReader(`{"sql":"SELECT"}`)))
	if w.Code != http.StatusOK || w.n < rows*cellLen {
		t.Fatalf("answered %d with %d bytes, want 200 and at least %d", w.Code, w.n, rows*cellLen)
	}
	if !strings.Contains(w.last, fmt.Sprintf(`{"end":{"rows":%d}}`, rows)) {
		t.Errorf("the answer ends %q, want its end line", w.last)
	}
	grown := int64(peak) - int64(base)
	if grown > 32<<20 {
		t.Errorf("the heap grew by %d MB while %d MB were answered", grown>>20, w.n>>20)
	}
	t.Logf("answered %d MB; heap grew at most %d KB", w.n>>20, max(grown, 0)>>10)
}

// countingWriter is a ResponseRecorder that keeps nothing of the body but a
// count and the last write (with its Body nil).
type countingWriter struct {
	*httptest.ResponseRecorder
	n    int
	last string
}

func (w *countingWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	w.last = string(b[max(0, len(b)-200):])
	return w.ResponseRecorder.Write(b)
}

// TestQueryRowPastTheByteCapNeverReachesGo: a row larger than
// ALPIPE_QUERY_MAX_BYTES is refused by DuckDB before it leaves the engine,
// naming the cap: scanning it into Go, rendering and encoding it took
// `serve` to 5 GB for a 1 GB cell, past every cap. The engine makes the
// value in its own memory; the Go heap must not.
func TestQueryRowPastTheByteCapNeverReachesGo(t *testing.T) {
	const big = 24 << 20
	srv := queryServer(t, replaytest.OpenWarehouse(t), config.Query{MaxRows: 10, MaxBytes: 1 << 20, Timeout: time.Minute})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := srv.QueryRows(t.Context(), fmt.Sprintf("SELECT repeat('x', %d) AS big", big), 0, &warehouse.Collect{})
	runtime.ReadMemStats(&after)
	if want := fmt.Sprintf("answer stopped at 0 rows: the next row holds %d bytes of cells, more than 1048576: ALPIPE_QUERY_MAX_BYTES", big); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Errorf("Go allocated %d MB answering it", grown>>20)
	}
}

// overlapping counts how many of its queries run at once.
type overlapping struct {
	now, peak atomic.Int32
}

func (o *overlapping) QueryRows(ctx context.Context, _ string, sink warehouse.RowSink) error {
	n := o.now.Add(1)
	defer o.now.Add(-1)
	for p := o.peak.Load(); n > p && !o.peak.CompareAndSwap(p, n); p = o.peak.Load() {
	}
	time.Sleep(30 * time.Millisecond) // DuckDB building a large value
	if err := sink.Columns([]string{"n"}); err != nil {
		return err
	}
	return sink.Row([]string{"1"})
}

// TestQueriesRunOneAtATime: a query's peak memory is outside the caps'
// reach (DuckDB builds a row before the row cap can refuse it), so the
// bound holds only if such queries never add up; a query waiting its turn
// past its timeout says why.
func TestQueriesRunOneAtATime(t *testing.T) {
	wh := &overlapping{}
	srv := queryServer(t, wh, config.Query{MaxRows: 10, MaxBytes: 1024, Timeout: time.Minute})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			var got warehouse.Collect
			_, err := srv.QueryRows(t.Context(), "SELECT 1", 0, &got)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("query: %v", err)
		}
	}
	if p := wh.peak.Load(); p != 1 {
		t.Errorf("%d queries ran at once, want 1", p)
	}
}
