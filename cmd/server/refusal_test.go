package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestStartRefusalsAreOneLineOfWords: a refusal to start lands in one JSON
// log field, so it must be one line, in words (no Go slice, no newline).
func TestStartRefusalsAreOneLineOfWords(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{name: "unknown target", env: map[string]string{"FUNCTION_TARGET": "Bogus", "WAREHOUSE": "bigquery"},
			want: `start: unknown function "Bogus": want one of IngestCSV, AggregateOrders, AdvanceWatermark, SweepLanding`},
		{name: "unknown warehouse", env: map[string]string{"FUNCTION_TARGET": "IngestCSV", "WAREHOUSE": "remote"},
			want: `start: IngestCSV: invalid configuration: IngestCSV configuration: WAREHOUSE="remote": want duckdb or bigquery`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			err := run(context.Background(), slog.New(slog.DiscardHandler))
			if err == nil {
				t.Fatal("run started")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tt.want) {
				t.Errorf("error = %q, want it to start with %q", msg, tt.want)
			}
			if strings.ContainsAny(msg, "[]\n") {
				t.Errorf("error %q holds a Go slice or a newline", msg)
			}
		})
	}
}
