package bigquery

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/test/bqemulator"
)

// What the BigQuery emulator gets wrong (defect*) bqfake does in front of
// it; TestGoogleSQLDefectsStillThere shows each one still there.
const (
	defectWindowSum = "emulator: SUM of NUMERIC as a window function (OVER) answers 0, so the DISCARDING views' importe " +
		"is compared outside the window function"
	defectArrayTimestamp = "emulator: ARRAY<TIMESTAMP> query parameters arrive as ARRAY<STRING> " +
		"(bqfake writes that array in as a literal)"
	defectInsertID       = "emulator: insertAll ignores insertId (bqfake de-duplicates)"
	defectDuplicateJob   = "emulator: a duplicate job ID answers 400 and still appends, instead of 409 (bqfake answers 409)"
	defectDryRun         = "emulator: a dry run always reports statementType SELECT (bqfake answers dry runs)"
	defectDefaultDataset = "emulator: a job's default dataset is ignored when the project has several datasets " +
		"(an unqualified name resolves to the first), so each accumulation mode runs on an emulator of its own"
	defectDecorator = "emulator: partition decorators (table$YYYYMMDD) are not supported and WRITE_TRUNCATE appends " +
		"(bqfake writes the partition)"
)

const (
	// emuLocation is the location jobs name: the emulator's datasets report none.
	emuLocation = "europe-west1"
	// restartAfter: the emulator slows down with the jobs it ran (a
	// jobs.insert took 100 ms fresh, 300-400 ms after 150 jobs), so a
	// fresh one (0.5 s to start) takes over between tests after this many.
	restartAfter = 60
)

// TestGoogleSQLReportsAnalyzerErrors: SQL BigQuery would refuse fails with
// GoogleSQL's own message, sent as a query or as a read with parameters.
func TestGoogleSQLReportsAnalyzerErrors(t *testing.T) {
	w := newSQLTestEnv(t, warehouse.Accumulating, nil).w
	ctx := context.Background()
	tag := []warehouse.Param{{ParamSpec: warehouse.ParamSpec{Name: "aggregation", Type: warehouse.String}, Values: []warehouse.Value{warehouse.StringValue("x")}}}
	tests := []struct {
		name   string
		sql    string
		params []warehouse.Param
		want   string
	}{
		{name: "QUALIFY without FROM", sql: "SELECT 1 AS n QUALIFY ROW_NUMBER() OVER () = 1",
			want: "Query without FROM clause cannot have a QUALIFY clause [at 1:15]"},
		{name: "DuckDB's strftime", sql: "SELECT strftime(window_start, '%Y') FROM ventas_hora_pais WHERE aggregation = @aggregation",
			params: tag, want: "Function not found: strftime [at 1:8]"},
		{name: "a column the view lacks", params: tag, sql: "SELECT sku FROM ventas_hora_pais WHERE aggregation = @aggregation",
			want: "Unrecognized name: sku [at 1:8]"},
		{name: "DuckDB's :: cast", sql: "SELECT pane_index::VARCHAR FROM ventas_hora_pais_paneles", want: "Syntax error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.params == nil {
				_, err = w.Query(ctx, tc.sql)
			} else {
				_, err = w.readSQL(ctx, tc.name, tc.sql, tc.params)
			}
			checkErr(t, err, tc.want)
		})
	}
}

// engine is the emulator binary of this run, the fake Cloud Storage its
// load jobs read, and the emulators the fakes share, one per view mode
// (defectDefaultDataset), each replaced after restartAfter statements.
type engine struct {
	bin     string
	gcsURL  string
	staging *objects.GCS

	starts atomic.Int32

	mu         sync.Mutex
	modes      map[string]*engineRun
	statements int // of the replaced emulators
}

type engineRun struct {
	em    *bqemulator.Emulator
	fakes []*bqfake.Fake
}

func (r *engineRun) statements() (n int) {
	for _, f := range r.fakes {
		n += f.Statements()
	}
	return n
}

var shared struct {
	once sync.Once
	eng  *engine
	skip string
	err  error
}

// emulator returns the shared engine, found on first use; a missing one
// fails the test, or under -short skips it.
func emulator(t *testing.T) *engine {
	t.Helper()
	shared.once.Do(func() {
		shared.eng, shared.skip, shared.err = findEngine(t)
	})
	switch {
	case shared.err != nil:
		t.Fatalf("GoogleSQL: %v", shared.err)
	case shared.skip != "":
		t.Skipf("GoogleSQL: %s", shared.skip)
	}
	return shared.eng
}

func findEngine(t *testing.T) (e *engine, skip string, err error) {
	root, err := bqemulator.RepoRoot()
	if err != nil {
		return nil, "", err
	}
	if testing.Short() {
		return nil, "-short: these tests start the BigQuery emulator; run without -short", nil
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok { // go install may take long: leave time to report
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Minute))
		defer cancel()
	}
	bin, err := bqemulator.Find(ctx, root, true)
	if err != nil {
		return nil, "", err
	}
	local, gcs, err := startStaging(ctx, func(f func()) { closers = append(closers, f) })
	if err != nil {
		return nil, "", err
	}
	srv := httptest.NewServer(local.Handler())
	closers = append(closers, srv.Close)
	e = &engine{bin: bin, gcsURL: srv.URL, staging: gcs, modes: map[string]*engineRun{}}
	closers = append(closers, func() {
		for _, r := range e.modes {
			r.em.Stop()
		}
	})
	return e, "", nil
}

// closers are run by TestMain, last first.
var closers []func()

// start starts an emulator whose load jobs read the staging server.
func (e *engine) start() (*bqemulator.Emulator, error) {
	em, err := bqemulator.Start(context.Background(), e.bin, bqemulator.Options{Project: testProject, Env: []string{"STORAGE_EMULATOR_HOST=" + e.gcsURL}})
	if err == nil {
		e.starts.Add(1)
	}
	return em, err
}

// run returns the URL of the emulator of mode, and track, which counts a
// fake's statements towards its restart.
func (e *engine) run(t *testing.T, mode string) (url string, track func(*bqfake.Fake)) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.modes[mode]
	if r != nil && r.statements() >= restartAfter {
		e.statements += r.statements()
		r.em.Stop()
		r = nil
	}
	if r == nil {
		em, err := e.start()
		if err != nil {
			t.Fatalf("GoogleSQL engine: %v", err)
		}
		r = &engineRun{em: em}
		e.modes[mode] = r
	}
	return r.em.URL, func(f *bqfake.Fake) {
		e.mu.Lock()
		defer e.mu.Unlock()
		r.fakes = append(r.fakes, f)
	}
}

func (e *engine) summary() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := e.statements
	for _, r := range e.modes {
		n += r.statements()
	}
	return fmt.Sprintf("GoogleSQL: %d statements ran on the BigQuery emulator (through bqfake, load jobs included); %d emulator starts", n, e.starts.Load())
}
