package bigquery

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
	"github.com/alpinashop/alpipe/test/bqemulator"
)

// The GoogleSQL run: the adapter against the BigQuery emulator
// (bqemulator), whose GoogleSQL analyzer sees every SELECT the adapter
// sends: the named reads with their typed parameters, both views in both
// accumulation modes as Terraform defines them, the aggregate's SELECT and
// the suite's queries. Their answers are compared with the rows the
// conformance suite expects of every adapter. What the emulator gets wrong
// (defect*) stays with bqfake (TestConformance), and each case that meets
// a defect names it.

// The known defects of the emulator (its README lists them), as a case
// that meets one names it.
const (
	defectWindowSum = "emulator: SUM of NUMERIC as a window function (OVER) answers 0, so the DISCARDING views' importe " +
		"is compared outside the window function"
	defectArrayTimestamp = "emulator: ARRAY<TIMESTAMP> query parameters arrive as ARRAY<STRING>, so that array is sent " +
		"as a literal and the other parameters as parameters (bqfake checks the parameter)"
	defectInsertID = "emulator: insertAll ignores insertId, so repeated rows are compared as distinct rows " +
		"(bqfake checks the de-duplication)"
	defectDuplicateJob = "emulator: a duplicate job ID answers 400 and still appends, instead of 409 " +
		"(bqfake checks exactly-once under races)"
	defectDryRun = "emulator: a dry run always reports statementType SELECT, so DML would run " +
		"(bqfake checks the refusal)"
	defectDefaultDataset = "emulator: a job's default dataset is ignored when the project has several datasets " +
		"(an unqualified name resolves to the first), so each accumulation mode runs on an emulator of its own"
	defectDecorator = "emulator: partition decorators (table$YYYYMMDD) are not supported and WRITE_TRUNCATE appends, " +
		"so the aggregate's SELECT writes a plain table whose rows replace the date's by DML (bqfake checks the decorator job)"
)

// The emulator's setting.
const (
	// emuLocation is what the adapter names in every job; the emulator's
	// datasets report no location, so it must be given (ResolveLocation).
	emuLocation = "europe-west1"
	// restartAfter: every job leaves a job and a result table behind and
	// every request reloads the project, so the emulator slows down with
	// the jobs it ran (here a jobs.insert took 100 ms fresh, 300-400 ms
	// after 150 jobs, and the run twice as long without restarts); a
	// fresh one (0.5 s to start, 1 s to create the dataset again) is
	// started between tests once this many jobs ran.
	restartAfter = 60
)

// TestGoogleSQL runs the conformance suite on the emulator, in both
// accumulation modes (the second runs the views and the named reads).
func TestGoogleSQL(t *testing.T) {
	e := emulator(t)
	start := time.Now()
	for _, mode := range []string{warehouse.Accumulating, warehouse.Discarding} {
		t.Run(mode, func(t *testing.T) {
			open := func(t *testing.T) warehousetest.Warehouse { return e.warehouse(t, mode) }
			f := warehousetest.Features{Accumulation: mode, Defects: e.defects()}
			if mode == warehouse.Accumulating {
				warehousetest.RunWith(t, open, f)
			} else {
				warehousetest.RunModeWith(t, open, f)
			}
			if strings.Contains(flag.Lookup("test.run").Value.String(), "/") {
				return // -run picked some cases: the others did not run
			}
			for _, q := range warehouse.NamedQueries() {
				if !e.ran(mode, q.Name) {
					t.Errorf("named read %s did not run on GoogleSQL", q.Name)
				}
			}
			if !e.ran(mode, warehouse.VentasDiariasSKU) {
				t.Errorf("the SELECT of aggregate %s did not run on GoogleSQL", warehouse.VentasDiariasSKU)
			}
		})
	}
	t.Logf("%s in %s", e.summary(), time.Since(start).Round(time.Millisecond))
}

// TestGoogleSQLReportsAnalyzerErrors: SQL that BigQuery would refuse fails
// with GoogleSQL's own message and position, whether the adapter sends it
// as a query or as a read with parameters.
func TestGoogleSQLReportsAnalyzerErrors(t *testing.T) {
	e := emulator(t)
	w := e.warehouse(t, warehouse.Accumulating)
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
		{name: "a column the view lacks", params: tag,
			sql:  "SELECT sku FROM ventas_hora_pais WHERE aggregation = @aggregation",
			want: "Unrecognized name: sku [at 1:8]"},
		{name: "DuckDB's :: cast", sql: "SELECT pane_index::VARCHAR FROM ventas_hora_pais_paneles",
			want: "Syntax error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.params == nil {
				_, err = w.Query(ctx, tc.sql)
			} else {
				_, err = w.readSQL(ctx, tc.name, tc.sql, tc.params)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want GoogleSQL's %q", err, tc.want)
			}
		})
	}
}

// engine is the emulator of this test binary, shared by the tests and
// restarted between them as it slows down (restartAfter).
type engine struct {
	bin     string
	gcsURL  string // the fake Cloud Storage its load jobs read
	staging *objects.GCS

	mu       sync.Mutex
	em       *bqemulator.Emulator
	client   *bigquery.Client
	count    *emulatorTransport
	atStart  int64  // count.jobs() when em started
	mode     string // of the views of em's dataset, once created
	starts   int
	runs     map[string]bool // mode + " " + what ran on GoogleSQL
	defected map[string]bool // the cases that named a defect
}

var shared struct {
	once sync.Once
	eng  *engine
	skip string
	err  error
}

// emulator returns the shared engine, started on first use. A missing
// emulator fails the test (naming the three places it can come from); in
// -short mode it skips instead, unless CI=true.
func emulator(t *testing.T) *engine {
	t.Helper()
	shared.once.Do(func() {
		shared.eng, shared.skip, shared.err = startEngine(t)
	})
	switch {
	case shared.err != nil:
		t.Fatalf("GoogleSQL run: %v", shared.err)
	case shared.skip != "":
		t.Skipf("GoogleSQL run: %s", shared.skip)
	}
	return shared.eng
}

func startEngine(t *testing.T) (e *engine, skip string, err error) {
	root, err := bqemulator.RepoRoot()
	if err != nil {
		return nil, "", err
	}
	if testing.Short() { // go test -short needs no emulator, the BigQuery one included
		return nil, "-short: the GoogleSQL run starts the BigQuery emulator; run without -short", nil
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
	// A listening server, for the emulator's process to read from.
	srv := httptest.NewServer(local.Handler())
	closers = append(closers, srv.Close)
	e = &engine{bin: bin, gcsURL: srv.URL, staging: gcs, count: &emulatorTransport{next: http.DefaultTransport},
		runs: map[string]bool{}, defected: map[string]bool{}}
	closers = append(closers, e.stop)
	if err := e.start(); err != nil {
		return nil, "", err
	}
	return e, "", nil
}

// closers are run by TestMain, last first, once the tests are done.
var closers []func()

func (e *engine) start() error {
	em, err := bqemulator.Start(context.Background(), e.bin, bqemulator.Options{
		Project: testProject,
		Env:     []string{"STORAGE_EMULATOR_HOST=" + e.gcsURL},
	})
	if err != nil {
		return err
	}
	client, err := bigquery.NewClient(context.Background(), testProject,
		option.WithEndpoint(em.URL+"/bigquery/v2/"),
		option.WithHTTPClient(&http.Client{Transport: e.count}),
	)
	if err != nil {
		em.Stop()
		return err
	}
	e.em, e.client, e.atStart, e.mode = em, client, e.count.jobs(), ""
	e.starts++
	return nil
}

func (e *engine) stop() {
	if e.em != nil {
		_ = e.client.Close()
		e.em.Stop()
		e.em = nil
	}
}

// warehouse is the adapter on the dataset whose views are in mode,
// wrapped for the emulator's defects (onEmulator). The emulator holds one
// dataset (defectDefaultDataset): another mode, or restartAfter jobs since
// it started, starts a fresh one.
func (e *engine) warehouse(t *testing.T, mode string) *onEmulator {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if (e.mode != "" && e.mode != mode) || e.count.jobs()-e.atStart >= restartAfter {
		e.stop()
		if err := e.start(); err != nil {
			t.Fatalf("restart the emulator: %v", err)
		}
	}
	ctx := context.Background()
	opt := Options{
		Location:      emuLocation,
		StagingBucket: testBucket,
		StagingPrefix: testPrefix,
		PollInterval:  5 * time.Millisecond,
	}
	var w *Warehouse
	var err error
	if e.mode != "" {
		opt.Project, opt.Dataset = testProject, testDataset
		w, err = New(e.client, e.staging, opt)
	} else {
		// Set up as the live run sets up its scratch dataset, whose
		// location it reads: the emulator's is empty.
		if err := e.client.Dataset(testDataset).Create(ctx, &bigquery.DatasetMetadata{}); err != nil {
			t.Fatalf("create dataset %s: %v", testDataset, err)
		}
		if w, err = openScratch(ctx, e.client, testDataset, mode, e.staging, opt); err == nil {
			e.mode = mode
		}
	}
	if err != nil {
		t.Fatalf("dataset %s on the emulator: %v", testDataset, err)
	}
	return &onEmulator{Warehouse: w, t: t, e: e, mode: mode}
}

func (e *engine) defects() warehousetest.Defects {
	return warehousetest.Defects{
		Cases: map[string]string{
			"QueryIsReadOnly":                defectDryRun,
			"ConcurrentLoadsOfOneIDLoadOnce": defectDuplicateJob,
		},
		WindowNumericSum: defectWindowSum,
		InsertIDIgnored:  defectInsertID,
		Note:             func(t *testing.T, _ string) { e.note(t) },
	}
}

// note counts t among the cases that name a defect.
func (e *engine) note(t *testing.T) { e.mark(e.defected, t.Name()) }

func (e *engine) record(mode, what string) { e.mark(e.runs, mode+" "+what) }

func (e *engine) mark(set map[string]bool, key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	set[key] = true
}

func (e *engine) ran(mode, what string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[mode+" "+what]
}

func (e *engine) summary() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.count
	return fmt.Sprintf("GoogleSQL: %d statements ran on the BigQuery emulator (%d of them dry runs), beside %d load jobs and %d insertAll; "+
		"%d cases name an emulator defect; %d emulator starts",
		c.statements.Load(), c.dryRuns.Load(), c.loads.Load(), c.inserts.Load(), len(e.defected), e.starts)
}

// onEmulator is the adapter on the emulator, with the two things the
// emulator cannot take as the adapter sends them done another way, each
// naming its defect.
type onEmulator struct {
	*Warehouse
	t    *testing.T
	e    *engine
	mode string
}

// Read runs a named read through the adapter; a read with an
// ARRAY<TIMESTAMP> parameter runs with that array written as a literal.
func (o *onEmulator) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	o.e.record(o.mode, s.Name())
	sql := s.SQL()
	var rest []warehouse.Param
	for _, p := range s.Params() {
		if p.Array && p.Type == warehouse.Timestamp {
			sql = strings.ReplaceAll(sql, "UNNEST(@"+p.Name+")", "UNNEST("+timestampArray(p.Values)+")")
			continue
		}
		rest = append(rest, p)
	}
	if len(rest) == len(s.Params()) {
		return o.Warehouse.Read(ctx, s)
	}
	o.t.Logf("engine defect: %s", defectArrayTimestamp)
	o.e.note(o.t)
	return o.readSQL(ctx, s.Name(), sql, rest)
}

// timestampArray writes ts as a GoogleSQL ARRAY<TIMESTAMP> literal.
func timestampArray(ts []warehouse.Value) string {
	lits := make([]string, len(ts))
	for i, v := range ts {
		lits[i] = "TIMESTAMP '" + v.Time.UTC().Format("2006-01-02 15:04:05.999999") + "+00'"
	}
	return "ARRAY<TIMESTAMP>[" + strings.Join(lits, ", ") + "]"
}

// RefreshDaily is the adapter's: its query jobs, whose destination is a
// partition (table$YYYYMMDD), reach the emulator as jobs into a plain table
// whose rows then replace the date's (emulatorTransport.decorate).
func (o *onEmulator) RefreshDaily(ctx context.Context, aggregate string, dates []int32) error {
	if _, err := warehouse.LookupAggregate(aggregate); err == nil && len(dates) > 0 {
		o.t.Logf("engine defect: %s", defectDecorator)
		o.e.note(o.t)
		o.e.record(o.mode, aggregate)
	}
	return o.Warehouse.RefreshDaily(ctx, aggregate, dates)
}
