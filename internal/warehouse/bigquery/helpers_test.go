package bigquery

import (
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	bq "google.golang.org/api/bigquery/v2"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/internal/warehouse/warehousetest"
)

const (
	testProject  = "alpipe-test"
	testDataset  = "alpinashop_analitica"
	testBucket   = "alpipe-staging"
	testPrefix   = "cargas/"
	fakeLocation = "EU" // the dataset location the tests give the adapter
)

// testEnv is the adapter wired to bqfake, with staging on the in-process
// fake Cloud Storage (fakegcs.Start) through the real objects.GCS adapter,
// so the load files the fake reads are the bytes the adapter uploaded.
type testEnv struct {
	w       *Warehouse
	fake    *bqfake.Fake
	gcs     *objects.GCS
	staging *recordingStaging
}

// newTestEnv fails the test at cleanup on any bqfake violation.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := newLaxTestEnv(t)
	e.fake.FailOnViolations(t)
	return e
}

// newLaxTestEnv leaves violations to the test (see TestFakeChecksRequests).
func newLaxTestEnv(t *testing.T) *testEnv {
	t.Helper()
	_, gcs, err := startStaging(context.Background(), t.Cleanup)
	if err != nil {
		t.Fatal(err)
	}
	return newEnv(t, gcs, bqfake.Options{})
}

// newEnv is newLaxTestEnv staging in gcs, with opt's SQL and ViewSQL.
func newEnv(t *testing.T, gcs *objects.GCS, opt bqfake.Options) *testEnv {
	t.Helper()
	ctx := context.Background()
	opt.Project, opt.Dataset = testProject, testDataset
	opt.Staged = func(ctx context.Context, bucket, name string) (io.ReadCloser, error) {
		return gcs.Open(ctx, bucket, name, 0)
	}
	fake, err := bqfake.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	client, err := bigquery.NewClient(ctx, testProject, option.WithEndpoint(srv.URL+"/bigquery/v2/"),
		option.WithoutAuthentication(), option.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	rs := &recordingStaging{Staging: gcs}
	w, err := New(client, rs, Options{Project: testProject, Dataset: testDataset, Location: fakeLocation,
		StagingBucket: testBucket, StagingPrefix: testPrefix, PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{w: w, fake: fake, gcs: gcs, staging: rs}
}

// startStaging starts the in-process fake Cloud Storage holding testBucket,
// with the real objects.GCS adapter over it; cleanup is handed what to close.
func startStaging(ctx context.Context, cleanup func(func())) (*fakegcs.Server, *objects.GCS, error) {
	local, err := fakegcs.Start("", testBucket)
	if err != nil {
		return nil, nil, err
	}
	cleanup(local.Close)
	sc, err := local.Client(ctx)
	if err != nil {
		return nil, nil, err
	}
	cleanup(func() { _ = sc.Close() })
	gcs, err := objects.NewGCS(sc)
	return local, gcs, err
}

// otherWriter is another instance's job racing ours for the same ID: its
// label names it, and its load reads its own copy of the file.
func otherWriter(fails *bq.ErrorProto) bqfake.Race {
	return bqfake.Race{Labels: map[string]string{writerLabel: "other"}, SourceURIs: []string{"gs://other-bucket/other.ndjson"}, Fails: fails}
}

// calls lists the IDs of the requests f received of method (such as
// "jobs.insert"), in order.
func calls(f *bqfake.Fake, method string) []string {
	var out []string
	for _, c := range f.Calls() {
		if id, ok := strings.CutPrefix(c, method+" "); ok {
			out = append(out, id)
		}
	}
	return out
}

// staged lists the objects left under the staging prefix.
func (e *testEnv) staged(t *testing.T) []string {
	t.Helper()
	var names []string
	for a, err := range e.gcs.List(context.Background(), testBucket, testPrefix) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.Name)
	}
	return names
}

// recordingStaging passes through to objects.GCS and records what the
// adapter asked of it.
type recordingStaging struct {
	Staging // Delete passes through

	mu      sync.Mutex
	creates []string
	aborts  []string
}

func (s *recordingStaging) Create(ctx context.Context, bucket, name, contentType string, metadata map[string]string) objects.Writer {
	s.mu.Lock()
	s.creates = append(s.creates, name)
	s.mu.Unlock()
	return &recordingWriter{Writer: s.Staging.Create(ctx, bucket, name, contentType, metadata), s: s, name: name}
}

func (s *recordingStaging) log() (creates, aborts []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.creates), slices.Clone(s.aborts)
}

type recordingWriter struct {
	objects.Writer
	s    *recordingStaging
	name string
}

func (w *recordingWriter) Abort() {
	w.s.mu.Lock()
	w.s.aborts = append(w.s.aborts, w.name)
	w.s.mu.Unlock()
	w.Writer.Abort()
}

// source is a RowSource over rows.
func source(rows [][]warehouse.Value) *warehousetest.Source {
	return &warehousetest.Source{Rows: rows}
}

func dec(t testing.TB, s string) numeric.Dec {
	t.Helper()
	d, err := numeric.Parse(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func day(t testing.TB, s string) int32 {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return warehouse.DateOf(d)
}

var ingestedAt = time.Date(2026, 3, 14, 9, 30, 15, 123456789, time.UTC)

// lineas builds n order lines of one source file.
func lineas(t testing.TB, n int) [][]warehouse.Value {
	t.Helper()
	rows := make([][]warehouse.Value, n)
	for i := range rows {
		cliente := warehouse.StringValue("C-77")
		if i%2 == 1 {
			cliente = warehouse.NullValue()
		}
		rows[i] = []warehouse.Value{warehouse.StringValue("P-1001"), warehouse.IntValue(int64(i + 1)), warehouse.DateValue(day(t, "2026-03-14")),
			warehouse.StringValue("SKU-ABC"), warehouse.IntValue(2), warehouse.DecValue(dec(t, "89.90")), cliente, warehouse.StringValue("ES"),
			warehouse.DecValue(dec(t, "179.80")), warehouse.StringValue("gs://alpina-landing/exportaciones/2026/03/14/pedidos.csv"),
			warehouse.IntValue(1710408615123456), warehouse.IntValue(int64(i + 2)), warehouse.TimeValue(ingestedAt)}
	}
	return rows
}
