package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/logging"
)

// TestTickLogFeedsTheMetrics: every jsonPayload field the AdvanceWatermark
// metrics of terraform/logging_metrics.tf filter on is written by the
// tick's log, with the severity their filters ask for.
func TestTickLogFeedsTheMetrics(t *testing.T) {
	var buf bytes.Buffer
	p := &Processor{log: logging.New(&buf, -8)}
	w := time.Date(2026, 3, 14, 18, 5, 0, 0, time.UTC)
	p.logTick(context.Background(), AggregationTick{
		Aggregation: "ventas_hora_pais", Watermark: w, Lag: 10 * time.Minute, FailingCells: 1,
		Failing: []FailingWindow{{Aggregation: "ventas_hora_pais", Path: pathsOf("ventas_hora_pais").statePart(w.Add(-65*time.Minute), 0),
			WindowStart: w.Add(-65 * time.Minute), Error: "decode: bad", Since: w.Add(-time.Hour)}},
	}, nil)

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, l)
		}
		lines = append(lines, m)
	}
	written := func(field, severity string) bool {
		for _, m := range lines {
			if _, ok := m[field]; ok && (severity == "" || m["severity"] == severity) {
				return true
			}
		}
		return false
	}

	tf, err := os.ReadFile(filepath.Join("..", "..", "terraform", "logging_metrics.tf"))
	if err != nil {
		t.Fatal(err)
	}
	// Each metric on the watermark service: its filter's jsonPayload fields
	// and whether it asks for severity>=ERROR.
	filter := regexp.MustCompile(`filter\s*=\s*"(.*AdvanceWatermark.*)"`)
	field := regexp.MustCompile(`jsonPayload\.([a-z_]+)`)
	checked := 0
	for _, m := range filter.FindAllStringSubmatch(string(tf), -1) {
		severity := ""
		if strings.Contains(m[1], "severity>=ERROR") {
			severity = "ERROR"
		}
		for _, f := range field.FindAllStringSubmatch(m[1], -1) {
			checked++
			if !written(f[1], severity) {
				t.Errorf("a metric filters on jsonPayload.%s (severity %q), which the tick's log does not write:\n%s", f[1], severity, buf.String())
			}
		}
	}
	if checked < 2 {
		t.Fatalf("found %d jsonPayload fields in the AdvanceWatermark metrics' filters; want at least watermark_lag_seconds and failing_cell", checked)
	}
}
