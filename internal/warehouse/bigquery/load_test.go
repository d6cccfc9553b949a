package bigquery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	bq "google.golang.org/api/bigquery/v2"

	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

const testLoadID = "alpina-landing_exportaciones-2026-03-14-pedidos-csv_g1710408615123456"

func TestLoadJobIDs(t *testing.T) {
	longP, longID := strings.Repeat("p", maxJobPrefixLen), strings.Repeat("i", warehouse.MaxLoadIDLen)
	tests := []struct {
		name, prefix, id string
		attempt          int
		wantJob, wantDir string // wantDir: the staged name less "/a<n>-<token>.ndjson"
	}{
		{"first attempt", "alpipe", "landing_pedidos-csv_g17", 1, "alpipe-landing_pedidos-csv_g17-a1", "landing_pedidos-csv_g17"},
		{"later attempt", "alpipe", "landing_pedidos-csv_g17", 12, "alpipe-landing_pedidos-csv_g17-a12", "landing_pedidos-csv_g17"},
		{"other prefix", "alpipe_staging-2", "x", 3, "alpipe_staging-2-x-a3", "x"},
		{"longest ID still fits BigQuery's 1,024", longP, longID, maxAttempts, longP + "-" + longID + "-a20", longID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := loadJobID(tc.prefix, tc.id, tc.attempt)
			if diff := cmp.Diff(tc.wantJob, got); diff != "" {
				t.Errorf("loadJobID (-want +got):\n%s", diff)
			}
			if !bqfake.ValidJobID(got) {
				t.Errorf("job ID %q is not valid for BigQuery (len %d)", got, len(got))
			}
			want := fmt.Sprintf("cargas/%s/a%d-0123456789abcdef.ndjson", tc.wantDir, tc.attempt)
			if diff := cmp.Diff(want, stagingName("cargas/", tc.id, tc.attempt, "0123456789abcdef")); diff != "" {
				t.Errorf("stagingName (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckJobIDPart(t *testing.T) {
	tests := []struct{ name, in, wantErr string }{
		{"letters digits underscore dash", "aZ09_-", ""},
		{"empty", "", "empty"},
		{"slash from an object name", "exportaciones/2026", `'/'`},
		{"dot", "pedidos.csv", `'.'`},
		{"non-ASCII", "año", "only letters"},
		{"too long", strings.Repeat("x", warehouse.MaxLoadIDLen+1), "more than 900"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkErr(t, warehouse.CheckID(tc.in, warehouse.MaxLoadIDLen), tc.wantErr) })
	}
}

func TestLoad(t *testing.T) {
	a1 := loadJobID("alpipe", testLoadID, 1)
	a2 := loadJobID("alpipe", testLoadID, 2)
	staged1 := testPrefix + testLoadID + "/a1-T.ndjson" // T: the call's writer token
	staged2 := testPrefix + testLoadID + "/a2-T.ndjson"
	loadCfg := &bq.JobConfiguration{Load: &bq.JobConfigurationLoad{}}
	emptyCfg := &bq.JobConfiguration{Query: &bq.JobConfigurationQuery{Query: emptyLoadSQL}}
	failure := &bq.ErrorProto{Reason: "backendError", Message: "scripted"}

	loaded := warehouse.LoadResult{Rows: 3}
	tests := []struct {
		name         string
		setup        func(f *bqfake.Fake)
		rows, failAt int
		want         warehouse.LoadResult
		wantErr      string
		wantInserts  []string // jobs.insert calls, in order
		wantCreates  []string // staging objects created
		wantAborts   []string
		wantTableLen int
		wantLeft     []string // staged objects left in the bucket afterwards
		readsRows    bool
	}{
		{name: "first load stages, runs attempt 1 and deletes the file", rows: 3, want: loaded,
			wantInserts: []string{a1}, wantCreates: []string{staged1}, wantTableLen: 3, readsRows: true},
		{name: "load job still running is waited for", setup: func(f *bqfake.Fake) { f.SetRunningPolls(3) }, rows: 2,
			want: warehouse.LoadResult{Rows: 2}, wantInserts: []string{a1}, wantCreates: []string{staged1}, wantTableLen: 2, readsRows: true},
		{name: "retry after success reports AlreadyLoaded without reading or staging", rows: 3,
			setup: func(f *bqfake.Fake) { f.SeedJob(a1, fakeLocation, loadCfg, nil) }, want: warehouse.LoadResult{AlreadyLoaded: true}},
		{name: "retry after a Load of no rows reports AlreadyLoaded without reading", rows: 3,
			setup: func(f *bqfake.Fake) { f.SeedJob(a1, fakeLocation, emptyCfg, nil) },
			want:  warehouse.LoadResult{AlreadyLoaded: true}},
		{name: "earlier failed attempt moves on to a2", setup: func(f *bqfake.Fake) { f.SeedJob(a1, fakeLocation, loadCfg, failure) },
			rows: 3, want: loaded, wantInserts: []string{a2}, wantCreates: []string{staged2}, wantTableLen: 3, readsRows: true},
		{name: "success after two failures is found at a3", rows: 3, want: warehouse.LoadResult{AlreadyLoaded: true},
			setup: func(f *bqfake.Fake) {
				f.SeedJob(a1, fakeLocation, loadCfg, failure)
				f.SeedJob(a2, fakeLocation, loadCfg, failure)
				f.SeedJob(loadJobID("alpipe", testLoadID, 3), fakeLocation, loadCfg, nil)
			}},
		{name: "job failing now is an error and keeps its file", setup: func(f *bqfake.Fake) { f.FailJob(a1, "internalError", "scripted") },
			rows: 3, wantErr: "job " + a1 + " failed", wantInserts: []string{a1}, wantCreates: []string{staged1},
			wantLeft: []string{staged1}, readsRows: true},
		// The other instance's rows (the same file) land, once.
		{name: "409 from a racing instance waits for its job", setup: func(f *bqfake.Fake) { f.Race(a1, otherWriter(nil)) }, rows: 3,
			want: warehouse.LoadResult{AlreadyLoaded: true}, wantInserts: []string{a1}, wantCreates: []string{staged1}, wantTableLen: 3, readsRows: true},
		{name: "409 from a racing instance whose job fails is an error", setup: func(f *bqfake.Fake) { f.Race(a1, otherWriter(failure)) },
			rows: 3, wantErr: "job " + a1 + " failed", wantInserts: []string{a1}, wantCreates: []string{staged1}, readsRows: true},
		{name: "503 on jobs.insert is retried by the client", setup: func(f *bqfake.Fake) { f.Fault("jobs.insert", http.StatusServiceUnavailable, false) },
			rows: 3, want: loaded, wantInserts: []string{a1, a1}, wantCreates: []string{staged1}, wantTableLen: 3, readsRows: true},
		{name: "503 after the job was created: the retry's 409 is our own job", rows: 3, want: loaded,
			setup:       func(f *bqfake.Fake) { f.Fault("jobs.insert", http.StatusInternalServerError, true) },
			wantInserts: []string{a1, a1}, wantCreates: []string{staged1}, wantTableLen: 3, readsRows: true},
		{name: "row source error aborts the upload and starts no job", rows: 5, failAt: 2, wantErr: "source broke midway",
			wantCreates: []string{staged1}, wantAborts: []string{staged1}, readsRows: true},
		// The marker writes no table: the suite's LoadOfNoRowsCommitsTheID on GoogleSQL.
		{name: "no rows: no file, a marker job commits the ID", rows: 0, wantInserts: []string{a1}, readsRows: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			if tc.setup != nil {
				tc.setup(e.fake)
			}
			src := &warehousetest.Source{Rows: lineas(t, tc.rows), FailAfter: tc.failAt}
			load := warehouse.Load{ID: testLoadID, Table: warehouse.LineasPedido, Rows: src}
			res, err := e.w.Load(context.Background(), load)
			checkErr(t, err, tc.wantErr)
			creates, aborts := e.staging.log()
			got := loadOutcome{Result: res, Inserts: calls(e.fake, "jobs.insert"), Creates: untoken(creates),
				Aborts: untoken(aborts), TableLen: len(e.fake.Rows(warehouse.LineasPedido)),
				Left: untoken(e.staged(t)), ReadsRows: src.Nexts.Load() > 0}
			want := loadOutcome{Result: tc.want, Inserts: tc.wantInserts,
				Creates: tc.wantCreates, Aborts: tc.wantAborts, Left: tc.wantLeft,
				TableLen: tc.wantTableLen, ReadsRows: tc.readsRows}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}

// loadOutcome is what a Load did: its result, the jobs.insert calls, the
// staged objects created, aborted and left, the rows in the table, whether
// the source was read.
type loadOutcome struct {
	Result                         warehouse.LoadResult
	Inserts, Creates, Aborts, Left []string
	TableLen                       int
	ReadsRows                      bool
}

func TestLoadRejectsBadRequests(t *testing.T) {
	nulls := slices.Repeat([]warehouse.Value{warehouse.NullValue()}, 10)
	tests := []struct {
		name    string
		req     warehouse.Load
		wantErr string
	}{
		{"ID with a slash", warehouse.Load{ID: "a/b", Table: warehouse.LineasPedido, Rows: source(nil)}, "invalid ID"},
		{"unknown table", warehouse.Load{ID: "a", Table: "pedidos", Rows: source(nil)}, `unknown table "pedidos"`},
		{"nil rows", warehouse.Load{ID: "a", Table: warehouse.LineasPedido}, "nil row source"},
		{"NULL in a REQUIRED column", warehouse.Load{ID: "a", Table: warehouse.Opiniones, Rows: source([][]warehouse.Value{nulls})},
			"row 1: column opinion_id is REQUIRED"},
		{"row of the wrong width", warehouse.Load{ID: "a", Table: warehouse.Opiniones, Rows: source([][]warehouse.Value{make([]warehouse.Value, 3)})},
			"row has 3 values, table opiniones has 10 columns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			_, err := e.w.Load(context.Background(), tc.req)
			checkErr(t, err, tc.wantErr)
			if got := calls(e.fake, "jobs.insert"); len(got) != 0 {
				t.Errorf("jobs inserted: %v", got)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}

var tokenSuffix = regexp.MustCompile(`-[0-9a-f]{16}\.ndjson$`)

// untoken replaces the random writer token in staged names by "T".
func untoken(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, tokenSuffix.ReplaceAllString(n, "-T.ndjson"))
	}
	return out
}

// TestLoadConcurrent: duplicate deliveries of one file race through the
// real path (each misses at lookup and stages its own file, or finds the
// winner's job running): exactly one appends, the others get 409 or find
// its job and report AlreadyLoaded, and no staged file is left behind.
func TestLoadConcurrent(t *testing.T) {
	e := newTestEnv(t)
	e.fake.SetRunningPolls(2)
	const n = 6
	results := make([]warehouse.LoadResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rows := &warehousetest.Source{Rows: lineas(t, 5)}
			load := warehouse.Load{ID: testLoadID, Table: warehouse.LineasPedido, Rows: rows}
			results[i], errs[i] = e.w.Load(context.Background(), load)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
	counts := map[warehouse.LoadResult]int{}
	for _, r := range results {
		counts[r]++
	}
	want := map[warehouse.LoadResult]int{{Rows: 5}: 1, {AlreadyLoaded: true}: n - 1}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("Load results, counted (-want +got):\n%s", diff)
	}
	if got := len(e.fake.Rows(warehouse.LineasPedido)); got != 5 {
		t.Errorf("table holds %d rows, want 5", got)
	}
	if left := e.staged(t); len(left) != 0 {
		t.Errorf("staged objects left: %v", left)
	}
}

// TestLoadJobErrorKind: a failed load job surfaces as *JobError, whose
// Permanent tells the caller whether another attempt can help.
func TestLoadJobErrorKind(t *testing.T) {
	tests := []struct {
		name, reason  string
		wantTransient bool
	}{
		{"BigQuery's own failure", "backendError", true},
		{"quota of table modifications", "quotaExceeded", true},
		{"data BigQuery refuses", "invalid", false},
		{"table gone", "notFound", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			a1 := loadJobID("alpipe", testLoadID, 1)
			e.fake.FailJob(a1, tc.reason, "scripted")
			_, err := e.w.Load(context.Background(), warehouse.Load{ID: testLoadID, Table: warehouse.LineasPedido, Rows: source(lineas(t, 1))})
			var je *JobError
			if !errors.As(err, &je) {
				t.Fatalf("error %v is not a *JobError", err)
			}
			got := []any{je.JobID, je.Reason, je.Message, !je.Permanent()}
			if diff := cmp.Diff([]any{a1, tc.reason, "scripted", tc.wantTransient}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestLoadStagesLargeFilesInParts: rows past stagingPartBytes are staged as
// several objects that one load job reads together, so the load stays
// atomic; every part is deleted after the job, and a source that fails in a
// later part leaves no part behind and starts no job.
func TestLoadStagesLargeFilesInParts(t *testing.T) {
	defer func(n int64) { stagingPartBytes = n }(stagingPartBytes)
	stagingPartBytes = 2 << 20 // a part closes past 1 MiB of rows
	const rows = 12000
	tests := []struct {
		name     string
		failAt   int
		wantRows int64
		wantErr  string
	}{
		{name: "every row in one job over several parts", wantRows: rows},
		{name: "a failure in a later part", failAt: rows - 1, wantErr: "source broke midway"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			src := &warehousetest.Source{Rows: lineas(t, rows), FailAfter: tc.failAt}
			got, err := e.w.Load(context.Background(), warehouse.Load{ID: testLoadID, Table: warehouse.LineasPedido, Rows: src})
			checkErr(t, err, tc.wantErr)
			creates, _ := e.staging.log()
			if len(creates) < 2 {
				t.Fatalf("staged %d objects (%v), want several parts", len(creates), creates)
			}
			if n := int64(len(e.fake.Rows(warehouse.LineasPedido))); n != tc.wantRows || got.Rows != n {
				t.Errorf("loaded %d rows, table holds %d, want %d", got.Rows, n, tc.wantRows)
			}
			if left := e.staged(t); len(left) != 0 {
				t.Errorf("staged objects left: %v", left)
			}
			var parts, wantParts []int // of each load job; none after a failed source
			for _, j := range e.fake.Jobs() {
				if j.Config.Load != nil {
					parts = append(parts, len(j.Config.Load.SourceUris))
				}
			}
			if tc.wantErr == "" {
				wantParts = []int{len(creates)}
			}
			if diff := cmp.Diff(wantParts, parts); diff != "" {
				t.Errorf("load jobs, by the parts they read (-want +got):\n%s", diff)
			}
		})
	}
}
