package functions

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/setup"
)

// wantRefused: each named HTTP function answers 500 naming why, and the
// CloudEvent function returns an error naming it.
func wantRefused(t *testing.T, l *Lazy, why string, names ...string) {
	t.Helper()
	for _, name := range names {
		code, body := post(http.HandlerFunc(l.HTTP(name)), []byte("{}"), false)
		if code != 500 || !strings.Contains(body, why) {
			t.Errorf("%s answered %d %q, want 500 naming %q", name, code, body, why)
		}
	}
	e := cloudevents.NewEvent()
	e.SetID("e-1")
	e.SetType("google.cloud.storage.object.v1.deleted")
	e.SetSource("//storage.googleapis.com/projects/_/buckets/" + ingesttest.Landing)
	err := l.CloudEvent(IngestCSVName)(context.Background(), e)
	if err == nil || !strings.Contains(err.Error(), why) {
		t.Errorf("the CloudEvent function returned %v, want an error naming %q", err, why)
	}
}

// TestLazyFailsRequestsOfAnInvalidConfiguration: the functions framework's
// registrations build nothing until a request comes (tests import
// package alpipe), and a configuration that cannot start answers 500
// naming the problem, on every request, as the process's start would have.
func TestLazyFailsRequestsOfAnInvalidConfiguration(t *testing.T) {
	t.Setenv("ALPIPE_DATA_DIR", t.TempDir())
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9")
	t.Setenv("FUNCTION_TARGET", "")
	t.Setenv("WAREHOUSE", "duckdb") // the laptop's default: this path links no DuckDB
	var l Lazy
	l.HTTP(AdvanceWatermarkName)
	l.CloudEvent(IngestCSVName)
	if l.prepared {
		t.Fatal("registering a function prepared the process")
	}
	const why = "WAREHOUSE=duckdb: this binary is built without cgo and links no embedded warehouse"
	// The first request fails, and so does the next: the failure is kept.
	wantRefused(t, &l, why, AdvanceWatermarkName, SweepLandingName)
}

// TestLazyServesOnlyItsTarget: prepared for one function (FUNCTION_TARGET),
// the process answers a request for another with 500 naming the target,
// and serves its own.
func TestLazyServesOnlyItsTarget(t *testing.T) {
	var l Lazy
	proc, cfg, err := l.Prepare(context.Background(), testOptions(t, time.Now, map[string]string{"FUNCTION_TARGET": SweepLandingName}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Close() })
	if cfg.Target != SweepLandingName {
		t.Fatalf("prepared for %q, want %s", cfg.Target, SweepLandingName)
	}
	// A second preparation returns the first's process, whatever it asks.
	if again, _, err := l.Prepare(context.Background(), setup.Options{}); again != proc || err != nil {
		t.Errorf("second Prepare = %p, %v; want the first process %p", again, err, proc)
	}
	code, body := post(http.HandlerFunc(l.HTTP(SweepLandingName)), []byte("{}"), false)
	if code != 200 || !strings.Contains(body, `"found":0`) {
		t.Errorf("its target answered %d %q, want 200 with the sweep's summary", code, body)
	}
	wantRefused(t, &l, "is not served here: FUNCTION_TARGET="+SweepLandingName, AggregateOrdersName)
}

// TestLazyPreparesAtStartOnlyOnCloudRun: under the buildpack's main on
// Cloud Run (K_SERVICE set) package alpipe's init prepares the functions,
// so that a configuration that cannot start fails the instance; anywhere
// else (go test) init builds nothing.
func TestLazyPreparesAtStartOnlyOnCloudRun(t *testing.T) {
	t.Setenv("ALPIPE_DATA_DIR", t.TempDir())
	t.Setenv("STORAGE_EMULATOR_HOST", "127.0.0.1:9")
	t.Setenv("FUNCTION_TARGET", AdvanceWatermarkName)
	t.Setenv("STATE_STORE", "embedded")
	// The laptop's defaults, which Cloud Run refuses.
	const why = "STATE_STORE=embedded keeps state in one instance's local file"
	for _, service := range []string{"", "alpipe-watermark"} {
		t.Setenv("K_SERVICE", service)
		var l Lazy
		err := l.PrepareOnCloudRun()
		onCloudRun := service != ""
		if l.prepared != onCloudRun || (err != nil) != onCloudRun || onCloudRun && !strings.Contains(err.Error(), why) {
			t.Errorf("K_SERVICE=%q: prepared %v, error %v; want both exactly on Cloud Run, the error naming %q", service, l.prepared, err, why)
		}
	}
}
