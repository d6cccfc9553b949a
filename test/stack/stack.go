package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	gfs "cloud.google.com/go/firestore"
	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/clock"
	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/internal/objects/fakegcs"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
	"github.com/alpinashop/alpipe/test/bqemulator"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// Options configures a Stack.
type Options struct {
	Binary string // a built cmd/server (BuildWith); required
	// Start is the test clock's first reading: every process reads its
	// processing time from one file (ALPIPE_CLOCK_FILE) that SetClock
	// moves. Zero runs on the real clock, without the file.
	Start   time.Time
	Backoff Backoff   // Eventarc's retry schedule (zero: DefaultBackoff)
	Output  io.Writer // also receives every process's output, prefixed with its service name
	// Adjust may change the deployment before the stack plays it, for tests
	// of a broken or faster configuration.
	Adjust func(d *tfconfig.Deployment)
}

// Stack is the running whole.
type Stack struct {
	// What Terraform deploys, in a project of its own: a new
	// "alpipe-stack-<random>" per stack, so that stacks sharing the
	// emulators never meet.
	tfconfig.Deployment

	// By FUNCTION_TARGET.
	Processes map[string]*Process
	Frontends map[string]*Frontend

	Storage   *storage.Client // of the fake GCS
	BigQuery  *bqfake.Fake
	Firestore *gfs.Client // the pipeline's database on the emulator
	PubSub    *pubsub.Client
	Eventarc  *Eventarc // nil without a storage trigger
	Scheduler *Scheduler
	Tasks     *Tasks
	// Monitor reads every process's JSON log lines, as the log-based
	// metrics would, for the console's monitoring panel.
	Monitor *dashboard.Monitor

	StorageURL, BigQueryURL string

	topics, subs []string // full names, deleted at Close
	clockFile    string
	dir          string
	gcs          *fakegcs.Server
	sql          *bqemulator.Emulator // GoogleSQL behind BigQuery
	servers      []*httptest.Server

	mu      sync.Mutex
	now     time.Time
	bqHooks []func(r *http.Request, body []byte)
}

// MissingEmulators names the emulators' variables this process's environment lacks.
func MissingEmulators() []string {
	return slices.DeleteFunc([]string{"FIRESTORE_EMULATOR_HOST", "PUBSUB_EMULATOR_HOST"}, func(v string) bool { return os.Getenv(v) != "" })
}

// EmulatorGaps is what the stack's stand-ins do not do as Google does,
// found by trying (TestPushSubscriptionAsConfigured).
var EmulatorGaps = []string{
	"Pub/Sub emulator: stores the push subscription's OIDC token, retry policy and dead-letter policy and returns them; pushes without an Authorization header (User-Agent Java/...) and without deliveryAttempt in the body; redelivers on its own timing (about 1 s, then 15-20 s) instead of retry_policy's 10-600 s; does forward to the dead-letter topic after max_delivery_attempts, some 30 s after the last attempt",
	"Firestore emulator: no TTL policies and no single-field index exemptions (firestore.tf's google_firestore_field resources are not applied)",
	"BigQuery: bqfake does the API's semantics (job IDs, partition decorators, insertId) in front of the BigQuery emulator, which runs every query in GoogleSQL; the emulator's SUM of NUMERIC as a window function is wrong, so a DISCARDING view's importe is not what BigQuery would answer",
	"fake GCS: no bucket notifications (the stack's Eventarc sees uploads through its front), no IAM, soft delete, lifecycle rules, and object times come from the real clock, not the test clock",
	"Eventarc: the delivery is played by the stack (headers, body, retries and the 24 h give-up as documented, on a compressed scale); the Pub/Sub transport Eventarc uses underneath is not",
	"Cloud Tasks: no emulator exists; the stack's stand-in (internal/tick/ticktest) answers CreateTask only, keeps a task name for the stack's life instead of about an hour, and dispatches a due task once, when Tasks.Due is called, with no retries (the queue's retry_config and rate_limits are not played)",
	"Cloud Run: no OIDC check, no ingress restriction, no request timeout beyond the callers' deadlines, one instance per service (no concurrency limit, no scale-out)",
}

// Start brings the stack up: it fails, naming the service and quoting its
// output, when any service does not start with its Terraform environment.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	if missing := MissingEmulators(); len(missing) > 0 {
		return nil, fmt.Errorf("stack: %s not set (scripts/stack.sh starts the emulators)", strings.Join(missing, ", "))
	}
	if opts.Binary == "" {
		return nil, errors.New("stack: Options.Binary is empty (see Build)")
	}
	if opts.Backoff == (Backoff{}) {
		opts.Backoff = DefaultBackoff
	}
	s = &Stack{Processes: map[string]*Process{}, Frontends: map[string]*Frontend{}, now: opts.Start}
	s.Monitor = dashboard.NewMonitor(s.Now)
	defer func() {
		if err != nil {
			_ = s.Close()
			s = nil
		}
	}()
	if s.dir, err = os.MkdirTemp("", "alpipe-stack-"); err != nil {
		return s, err
	}
	d, err := tfconfig.Open("alpipe-stack-" + strings.ToLower(rand.Text()[:8]))
	if err != nil {
		return s, err
	}
	if opts.Adjust != nil {
		opts.Adjust(d)
	}
	s.Deployment = *d

	if !opts.Start.IsZero() {
		s.clockFile = filepath.Join(s.dir, "clock")
		if err := clock.Set(s.clockFile, opts.Start); err != nil {
			return s, err
		}
	}

	// Cloud Storage behind the hook that plays the bucket notifications
	// Eventarc is built on.
	if s.gcs, err = fakegcs.Start("", slices.Collect(maps.Values(s.Buckets))...); err != nil {
		return s, err
	}
	gcsSrv := s.serve(storageHook(s.gcs.Handler(), func(obj map[string]any) {
		if s.Eventarc != nil {
			s.Eventarc.finalized(obj)
		}
	}))
	s.StorageURL = gcsSrv.URL
	if s.Storage, err = storage.NewClient(ctx, option.WithEndpoint(gcsSrv.URL+"/storage/v1/"), option.WithoutAuthentication(), storage.WithJSONReads()); err != nil {
		return s, fmt.Errorf("storage client: %w", err)
	}

	// BigQuery: the fake for the API's semantics in front of the BigQuery
	// emulator, which holds a copy of every row and runs every query; load
	// jobs read the staged files from the fake GCS.
	root, err := bqemulator.RepoRoot()
	if err != nil {
		return s, err
	}
	bin, err := bqemulator.Find(ctx, root, false)
	if err != nil {
		return s, fmt.Errorf("stack: BigQuery's GoogleSQL engine: %w", err)
	}
	if s.sql, err = bqemulator.Start(ctx, bin, bqemulator.Options{Project: s.Project,
		Env: []string{"STORAGE_EMULATOR_HOST=" + gcsSrv.URL}}); err != nil {
		return s, fmt.Errorf("stack: BigQuery's GoogleSQL engine: %w", err)
	}
	views, err := terraformViews(root, s.Project, s.Dataset)
	if err != nil {
		return s, err
	}
	if s.BigQuery, err = bqfake.New(bqfake.Options{
		Project: s.Project, Dataset: s.Dataset, SQL: s.sql.URL, ViewSQL: views,
		Staged: func(ctx context.Context, bucket, name string) (io.ReadCloser, error) {
			return s.Storage.Bucket(bucket).Object(name).NewReader(ctx)
		},
	}); err != nil {
		return s, err
	}
	bqSrv := s.serve(s.bigQueryHook(s.BigQuery.Handler()))
	s.BigQueryURL = bqSrv.URL
	if s.Tasks, err = newTasks(s.Now); err != nil {
		return s, err
	}

	for _, svc := range d.Services {
		extra := map[string]string{
			"FIRESTORE_EMULATOR_HOST": os.Getenv("FIRESTORE_EMULATOR_HOST"),
			"STORAGE_EMULATOR_HOST":   strings.TrimPrefix(gcsSrv.URL, "http://"),
			"BIGQUERY_EMULATOR_HOST":  strings.TrimPrefix(bqSrv.URL, "http://"),
			"K_SERVICE":               svc.Name,
			"K_CONFIGURATION":         svc.Name,
			"K_REVISION":              svc.Name + "-00001-stk",
		}
		if s.clockFile != "" {
			extra["ALPIPE_CLOCK_FILE"] = s.clockFile
		}
		if svc.Env["TICK_QUEUE"] != "" { // TICK_INTERVAL=30s: it creates follow-up ticks
			extra["CLOUD_TASKS_EMULATOR_HOST"] = s.Tasks.Addr
		}
		p := &Process{Service: svc, bin: opts.Binary, extra: extra, echo: opts.Output, monitor: s.Monitor}
		s.Processes[svc.Function] = p
		s.Frontends[svc.Function] = newFrontend(p, svc.Timeout)
		s.Tasks.route(s.serviceURL(s.Frontends[svc.Function]), s.Frontends[svc.Function])
	}

	if len(d.StorageTriggers) > 1 {
		return s, fmt.Errorf("%d storage triggers: the stack plays one", len(d.StorageTriggers))
	}
	// tfconfig.Open refuses a push, job or trigger of a function no service runs.
	for _, t := range d.StorageTriggers {
		f := s.Frontends[t.Function]
		s.Eventarc = newEventarc(t, f, s.serviceURL(f), opts.Backoff)
	}

	s.Scheduler = newScheduler(s.Now)
	for _, j := range d.SchedulerJobs {
		f := s.Frontends[j.Function]
		if err := s.Scheduler.add(j, f, s.serviceURL(f)); err != nil {
			return s, err
		}
	}

	if err := s.startProcesses(ctx); err != nil {
		return s, err
	}
	if s.Firestore, err = gfs.NewClientWithDatabase(ctx, s.Project, s.FirestoreDatabase); err != nil {
		return s, fmt.Errorf("firestore client: %w", err)
	}
	// Pub/Sub last: a push subscription pushes as soon as it exists.
	if err := s.setUpPubSub(ctx); err != nil {
		return s, err
	}
	return s, nil
}

// placeholderProjectNumber stands for the project's number in the URLs
// Cloud Run gives services (terraform test's mock uses the same).
const placeholderProjectNumber = "123456789012"

// serviceURL is the URL Cloud Run gives the service behind f, the audience
// of the OIDC tokens that call it: https://<service>-<project number>.<region>.run.app.
func (s *Stack) serviceURL(f *Frontend) string {
	return "https://" + f.proc.Service.Name + "-" + placeholderProjectNumber + "." + s.Region + ".run.app"
}

// startProcesses starts every service at once and reports every failure.
func (s *Stack) startProcesses(ctx context.Context) error {
	var wg sync.WaitGroup
	procs := slices.Collect(maps.Values(s.Processes))
	errs := make([]error, len(procs))
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.Start(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Stack) serve(h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	s.servers = append(s.servers, srv)
	return srv
}

// OnBigQuery calls hook after the fake answered each BigQuery request, e.g.
// to crash a process right after its load job reached BigQuery.
func (s *Stack) OnBigQuery(hook func(r *http.Request, body []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bqHooks = append(s.bqHooks, hook)
}

func (s *Stack) bigQueryHook(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
		s.mu.Lock()
		hooks := append([]func(*http.Request, []byte){}, s.bqHooks...)
		s.mu.Unlock()
		for _, h := range hooks {
			h(r, body)
		}
	})
}

// Now is the stack's processing time: the test clock, or the real one.
func (s *Stack) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clockFile == "" {
		return time.Now().UTC()
	}
	return s.now
}

// SetClock moves every process's clock to t (never backwards).
func (s *Stack) SetClock(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clockFile == "" {
		return errors.New("the stack runs on the real clock (Options.Start is zero)")
	}
	if t.Before(s.now) {
		return fmt.Errorf("clock moves forward only: %s is before %s", t, s.now)
	}
	if err := clock.Set(s.clockFile, t); err != nil {
		return err
	}
	s.now = t
	return nil
}

// Upload writes an object to the fake GCS as the ERP does (contentEncoding
// as gsutil -Z stores it) and returns its generation.
func (s *Stack) Upload(ctx context.Context, bucket, name string, data []byte, contentEncoding string) (int64, error) {
	w := s.Storage.Bucket(bucket).Object(name).NewWriter(ctx)
	w.ContentType, w.ContentEncoding = "text/csv", contentEncoding
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return 0, fmt.Errorf("upload gs://%s/%s: %w", bucket, name, err)
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("upload gs://%s/%s: %w", bucket, name, err)
	}
	return w.Attrs().Generation, nil
}

// Close stops the pushes first, then the rest, and removes what the stack
// created on the emulators.
func (s *Stack) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var errs []error
	errs = append(errs, s.tearDownPubSub(ctx))
	if s.Eventarc != nil {
		s.Eventarc.Close()
	}
	for _, p := range s.Processes {
		errs = append(errs, p.Stop())
	}
	for _, f := range s.Frontends {
		f.Close()
	}
	for _, srv := range s.servers {
		srv.Close()
	}
	if s.Tasks != nil {
		s.Tasks.Close()
	}
	if s.gcs != nil {
		s.gcs.Close()
	}
	if s.sql != nil {
		s.sql.Stop()
	}
	if s.Storage != nil {
		errs = append(errs, s.Storage.Close())
	}
	if s.Firestore != nil {
		errs = append(errs, s.Firestore.Close())
	}
	if s.dir != "" {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}

// Output is every process's output, for a failing test's message.
func (s *Stack) Output() string {
	var b strings.Builder
	for fn, p := range s.Processes {
		fmt.Fprintf(&b, "=== %s (%s)\n%s", p.Service.Name, fn, p.Output())
	}
	return b.String()
}

var planTable = regexp.MustCompile("`[^`.]+\\.[^`.]+\\.")

// terraformViews answers each view's query as Terraform creates it: the
// plan's SQL in terraform/module.json, in the view's accumulation mode, on
// the stack's project and dataset.
func terraformViews(root, project, dataset string) (func(warehouse.View) (string, error), error) {
	b, err := os.ReadFile(filepath.Join(root, "terraform", "module.json"))
	if err != nil {
		return nil, fmt.Errorf("stack: views: %w", err)
	}
	var m struct {
		Views map[string]struct {
			Accumulation string            `json:"accumulation"`
			SQL          map[string]string `json:"sql"`
		} `json:"views"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("stack: views: terraform/module.json: %w", err)
	}
	return func(v warehouse.View) (string, error) {
		view, ok := m.Views[v.Name]
		sql := view.SQL[view.Accumulation]
		if !ok || sql == "" {
			return "", fmt.Errorf("stack: terraform/module.json has no query for view %s", v.Name)
		}
		return planTable.ReplaceAllLiteralString(sql, "`"+project+"."+dataset+"."), nil
	}, nil
}
