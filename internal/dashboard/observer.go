package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"
)

// Handler wraps next so that every record logged through it also feeds m.
// It asks for the DEBUG lines of each accepted order and passes next only
// what next wants.
func (m *Monitor) Handler(next slog.Handler) slog.Handler {
	return &observer{m: m, next: next}
}

type observer struct {
	m       *Monitor
	next    slog.Handler
	attrs   []slog.Attr // from WithAttrs, for the error lines
	grouped bool        // WithGroup was called: the fields are not where the log contract puts them
}

func (o *observer) Enabled(context.Context, slog.Level) bool { return true }

func (o *observer) Handle(ctx context.Context, r slog.Record) error {
	if !o.grouped {
		o.m.observe(r, o.attrs)
	}
	if !o.next.Enabled(ctx, r.Level) {
		return nil
	}
	return o.next.Handle(ctx, r)
}

func (o *observer) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &observer{m: o.m, next: o.next.WithAttrs(attrs), attrs: append(slices.Clip(o.attrs), attrs...), grouped: o.grouped}
}

func (o *observer) WithGroup(name string) slog.Handler {
	return &observer{m: o.m, next: o.next.WithGroup(name), attrs: o.attrs, grouped: true}
}

// ObserveLine feeds m one JSON log line of package logging's form, so a
// process watching another's output (the production-parity stack) gets the
// same panel as serve. A line that is not a JSON object is ignored.
func (m *Monitor) ObserveLine(line []byte) {
	// Token by token: the error panel repeats the fields in the line's order.
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	var (
		msg, sev string
		logged   time.Time
		attrs    []slog.Attr
	)
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := t.(string)
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		s, _ := v.(string)
		switch key {
		case "message":
			msg = s
		case "severity":
			sev = s
		case "time":
			logged, _ = time.Parse(time.RFC3339Nano, s)
		default:
			attrs = append(attrs, slog.Attr{Key: key, Value: jsonValue(key, v)})
		}
	}
	r := slog.NewRecord(logged, levelOf(sev), msg, 0)
	r.AddAttrs(attrs...)
	m.observe(r, nil)
}

func levelOf(severity string) slog.Level {
	switch severity {
	case "ERROR", "CRITICAL", "ALERT", "EMERGENCY":
		return slog.LevelError
	case "WARNING":
		return slog.LevelWarn
	case "DEBUG":
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// jsonValue is a field's value as slog would have held it: numbers,
// booleans, the watermark as a time, anything else as its text.
func jsonValue(key string, v any) slog.Value {
	switch x := v.(type) {
	case bool:
		return slog.BoolValue(x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return slog.Int64Value(n)
		}
		f, _ := x.Float64()
		return slog.Float64Value(f)
	case string:
		if key == "watermark" {
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				return slog.TimeValue(t)
			}
		}
		return slog.StringValue(x)
	}
	raw, _ := json.Marshal(v)
	return slog.StringValue(string(raw))
}

// fields are the attributes of a record, resolved, by key.
type fields map[string]slog.Value

func fieldsOf(r slog.Record) fields {
	f := fields{}
	r.Attrs(func(a slog.Attr) bool {
		f[a.Key] = a.Value.Resolve()
		return true
	})
	return f
}

func (f fields) str(key string) string {
	if v, ok := f[key]; ok {
		return v.String()
	}
	return ""
}

func (f fields) flag(key string) bool { return f[key].Kind() == slog.KindBool && f[key].Bool() }

func (f fields) has(key string) bool { _, ok := f[key]; return ok }

// number reads an int or a float field, 0 when it is neither.
func (f fields) number(key string) float64 {
	switch v := f[key]; v.Kind() {
	case slog.KindInt64:
		return float64(v.Int64())
	case slog.KindUint64:
		return float64(v.Uint64())
	case slog.KindFloat64:
		return v.Float64()
	}
	return 0
}
