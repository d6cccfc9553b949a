package functions

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/setup"
)

// lazyOutcome is what a registered function made of one request.
type lazyOutcome struct {
	Code     int    // of an HTTP function
	Err      bool   // of a CloudEvent function
	Mentions string // the answer or error names this
}

type lazyCase struct {
	name string
	call func() lazyOutcome
	want lazyOutcome
}

func runLazy(t *testing.T, tests []lazyCase) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.call()); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func callLazy(t *testing.T, l *Lazy, name string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	l.HTTP(name)(rec, req)
	return rec.Code, rec.Body.String()
}

func eventLazy(l *Lazy, name string) error {
	e := cloudevents.NewEvent()
	e.SetID("e-1")
	e.SetType("google.cloud.storage.object.v1.deleted")
	e.SetSource("//storage.googleapis.com/projects/_/buckets/" + ingesttest.Landing)
	return l.CloudEvent(name)(context.Background(), e)
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
	runLazy(t, []lazyCase{
		{name: "first request", call: func() lazyOutcome {
			code, body := callLazy(t, &l, AdvanceWatermarkName)
			return lazyOutcome{Code: code, Mentions: mention(body, why)}
		}, want: lazyOutcome{Code: 500, Mentions: why}},
		{name: "next request: the failure is kept", call: func() lazyOutcome {
			code, body := callLazy(t, &l, SweepLandingName)
			return lazyOutcome{Code: code, Mentions: mention(body, why)}
		}, want: lazyOutcome{Code: 500, Mentions: why}},
		{name: "a CloudEvent", call: func() lazyOutcome {
			err := eventLazy(&l, IngestCSVName)
			return lazyOutcome{Err: err != nil, Mentions: mention(errText(err), why)}
		}, want: lazyOutcome{Err: true, Mentions: why}},
	})
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
	const why = "is not served here: FUNCTION_TARGET=" + SweepLandingName
	runLazy(t, []lazyCase{
		{name: "its target", call: func() lazyOutcome {
			code, body := callLazy(t, &l, SweepLandingName)
			return lazyOutcome{Code: code, Mentions: mention(body, `"found":0`)}
		}, want: lazyOutcome{Code: 200, Mentions: `"found":0`}},
		{name: "another HTTP function", call: func() lazyOutcome {
			code, body := callLazy(t, &l, AggregateOrdersName)
			return lazyOutcome{Code: code, Mentions: mention(body, why)}
		}, want: lazyOutcome{Code: 500, Mentions: why}},
		{name: "the CloudEvent function", call: func() lazyOutcome {
			err := eventLazy(&l, IngestCSVName)
			return lazyOutcome{Err: err != nil, Mentions: mention(errText(err), why)}
		}, want: lazyOutcome{Err: true, Mentions: why}},
	})
}

// mention is want when s contains it, else s itself, so that a mismatch
// shows what was said.
func mention(s, want string) string {
	if strings.Contains(s, want) {
		return want
	}
	return s
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
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
	type outcome struct {
		Prepared bool
		Err      string
	}
	// The laptop's defaults, which Cloud Run refuses.
	const why = "STATE_STORE=embedded keeps state in one instance's local file"
	tests := []struct {
		name    string
		service string
		want    outcome
	}{
		{name: "off Cloud Run", want: outcome{}},
		{name: "on Cloud Run", service: "alpipe-watermark", want: outcome{Prepared: true, Err: why}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("K_SERVICE", tt.service)
			var l Lazy
			err := l.PrepareOnCloudRun()
			got := outcome{Prepared: l.prepared, Err: mention(errText(err), why)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}
