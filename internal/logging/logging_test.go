package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewWritesCloudLoggingFields(t *testing.T) {
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want map[string]any
	}{
		{"info with fields", func(l *slog.Logger) { l.Info("file done", "rows_read", 4) },
			map[string]any{"severity": "INFO", "message": "file done", "rows_read": float64(4)}},
		{"warning", func(l *slog.Logger) { l.Warn("lease lost") }, map[string]any{"severity": "WARNING", "message": "lease lost"}},
		{"error", func(l *slog.Logger) { l.Error("file rejected", "reason", "empty") },
			map[string]any{"severity": "ERROR", "message": "file rejected", "reason": "empty"}},
		{"debug below level is dropped", func(l *slog.Logger) { l.Debug("noise") }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(New(&buf, slog.LevelInfo))
			var got map[string]any
			if buf.Len() > 0 {
				if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
					t.Fatalf("not JSON: %q: %v", buf.String(), err)
				}
				delete(got, "time")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
		})
	}
}
