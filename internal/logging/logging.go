// Package logging builds slog loggers whose JSON lines Cloud Logging parses
// into structured entries: "severity" and "message" are the special fields it
// reads (https://cloud.google.com/logging/docs/structured-logging), and every
// other attribute lands in jsonPayload, where log-based metrics can read it.
package logging

import (
	"io"
	"log/slog"
)

// New returns a JSON logger for Cloud Logging writing to w.
func New(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{
		Level:       level,
		ReplaceAttr: replace,
	}))
}

func replace(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.MessageKey:
		a.Key = "message"
	case slog.LevelKey:
		a.Key = "severity"
		a.Value = slog.StringValue(severity(a.Value.Any().(slog.Level)))
	}
	return a
}

// severity maps slog levels onto Cloud Logging's LogSeverity names.
func severity(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	default:
		return "DEBUG"
	}
}

// Discard returns a logger that drops everything, for tests and benchmarks.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
