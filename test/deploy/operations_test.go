package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The log-based metrics, the dashboard and the alert policies are checked
// by terraform/tests/monitoring.tftest.hcl, on the resources it names (a
// terraform test cannot enumerate the resources of a type): every one of
// the module must be named there.
func TestMonitoringIsAllChecked(t *testing.T) {
	checks := readRepoFile(t, "terraform/tests/monitoring.tftest.hcl")
	m := parseModule(t)
	n := 0
	for _, typ := range []string{"google_logging_metric", "google_monitoring_alert_policy"} {
		for _, r := range m.blocksOf("resource", typ) {
			n++
			if addr := typ + "." + r.Labels[1]; !regexp.MustCompile(`\b` + regexp.QuoteMeta(addr) + `\b`).MatchString(checks) {
				t.Errorf("%s is not checked by terraform/tests/monitoring.tftest.hcl: add it there", addr)
			}
		}
	}
	if n == 0 {
		t.Fatal("no metric or alert policy found")
	}
}

// The metrics count log lines the services write (their fields are checked
// by terraform test): a permanent ingest failure's reason starts with
// "permanent" (ingest_failed), the sweeper's "sweep finished" line
// carries the fields the sweep metrics extract, and AggregateOrders logs
// each order's fate (orders_accepted, orders_late_dropped) and whether a
// dead letter is a redelivery (orders_invalid leaves those out).
func TestLogLinesTheMetricsReadExist(t *testing.T) {
	handle, fates := readRepoFile(t, "internal/stream/handle.go"), readRepoFile(t, "internal/stream/processor.go")
	for _, c := range []struct{ src, text string }{
		{handle, `"order handled"`}, {handle, `"fate", o.Fate`}, {handle, `"aggregation", o.Aggregation`},
		{handle, `"message dead-lettered"`}, {handle, `"duplicate", r.Duplicate`},
		{fates, `Fate = "accepted"`}, {fates, `Fate = "too_late"`},
	} {
		if !strings.Contains(c.src, c.text) {
			t.Errorf("internal/stream no longer has %s: the orders metrics (terraform/logging_metrics.tf) filter on it and would count nothing", c.text)
		}
	}
	if src := readRepoFile(t, "internal/ingest/ingest.go"); !strings.Contains(src, `"permanent (not retried`) {
		t.Error(`internal/ingest no longer marks permanent failures with a reason starting "permanent": the ingest_failed metric counts nothing`)
	}
	paths, _ := filepath.Glob(filepath.Join(repoRoot(t), "internal", "sweep", "*.go"))
	found := false
	for _, p := range paths {
		b, err := os.ReadFile(p)
		check(t, err)
		if src := string(b); !strings.HasSuffix(p, "_test.go") && strings.Contains(src, `"sweep finished"`) {
			found = true
			for _, field := range []string{`"found"`, `"ingested"`, `"failed"`, `"skipped"`} {
				if !strings.Contains(src, field) {
					t.Errorf("%s logs \"sweep finished\" without the field %s the metrics extract", p, field)
				}
			}
		}
	}
	if !found {
		t.Error("no \"sweep finished\" log line in internal/sweep: the sweeper metrics and alert would see nothing")
	}
}
