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
		name  string
		log   func(*slog.Logger)
		level slog.Level
		want  map[string]any
	}{
		{
			name: "info with fields",
			log:  func(l *slog.Logger) { l.Info("file done", "rows_read", 4) },
			want: map[string]any{"severity": "INFO", "message": "file done", "rows_read": float64(4)},
		},
		{
			name: "warning",
			log:  func(l *slog.Logger) { l.Warn("lease lost") },
			want: map[string]any{"severity": "WARNING", "message": "lease lost"},
		},
		{
			name: "error",
			log:  func(l *slog.Logger) { l.Error("file rejected", "reason", "empty") },
			want: map[string]any{"severity": "ERROR", "message": "file rejected", "reason": "empty"},
		},
		{
			name:  "debug below level is dropped",
			log:   func(l *slog.Logger) { l.Debug("noise") },
			level: slog.LevelInfo,
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.log(New(&buf, tt.level))
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
