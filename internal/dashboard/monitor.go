package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Monitor answers Dataflow's monitoring questions on the local page (how
// fresh is the data, how far behind is processing, how many orders a
// minute, any dead letters, drops or errors now) from the server's own log
// records: the lines the log-based metrics of terraform/logging_metrics.tf
// count in production, read here as they are written. It keeps a bounded
// ring of per-minute samples of processing time (the minutes in which
// something happened, at most MonitorMinutes of them) and the last
// MonitorErrors ERROR lines, so a server left running for weeks holds the
// same few hundred kilobytes as one started a minute ago.
type Monitor struct {
	now func() time.Time

	mu      sync.Mutex
	minutes []*minute // oldest first, at most max
	max     int
	aggs    map[string]*aggGauge
	errs    []ErrorLine // oldest first, at most MonitorErrors
}

// Bounds of what a Monitor keeps.
const (
	// MonitorMinutes is how many minutes with samples are kept: a day of
	// minutes with activity in every one.
	MonitorMinutes = 24 * 60
	// MonitorErrors is how many of the newest ERROR lines are kept.
	MonitorErrors = 20
	// maxErrorText bounds one kept line: a stack of wrapped errors stays
	// readable, a megabyte of payload does not fill the ring.
	maxErrorText = 1000
)

// minute is one minute of processing time in which something was logged.
type minute struct {
	at              time.Time
	aggs            map[string]*aggMinute
	deadLetters     int64
	filesLoaded     int64
	rowsQuarantined int64
}

// aggMinute is one aggregation's figures in a minute.
type aggMinute struct {
	accepted, tooLate int64
	// freshness is now - W as the minute's last tick said it; -1 when no
	// tick ran in the minute.
	freshness int64
	// systemLag is the largest age, in the minute, of the oldest order
	// accepted and not yet folded by a tick.
	systemLag int64
}

// aggGauge is what the gauges of one aggregation stand at now.
type aggGauge struct {
	watermark time.Time // as the last tick said; zero before any
	unfolded  time.Time // when the oldest order not yet folded was accepted; zero: none
}

// NewMonitor returns an empty Monitor reading processing time from now
// (the server's clock: a virtual one moves only with the ticks).
func NewMonitor(now func() time.Time) *Monitor {
	if now == nil {
		now = time.Now
	}
	return &Monitor{now: now, max: MonitorMinutes, aggs: map[string]*aggGauge{}}
}

// Handler wraps next so that every record logged through it also feeds m.
// It asks for the DEBUG lines of each accepted order (the stream logs them
// only when a handler wants them) and passes next only what next wants.
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

// ObserveLine feeds m one JSON log line as Cloud Logging reads it (package
// logging's form: severity, message, time and the fields): a process that
// watches other processes' output, such as the production-parity stack
// watching cmd/server's, gets the same panel as serve. A line that is not
// a JSON object is ignored.
func (m *Monitor) ObserveLine(line []byte) {
	// The fields in the line's order, as the error panel repeats them.
	dec := json.NewDecoder(bytes.NewReader(line))
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
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			return
		}
		switch key {
		case "message":
			_ = json.Unmarshal(raw, &msg)
		case "severity":
			_ = json.Unmarshal(raw, &sev)
		case "time":
			_ = json.Unmarshal(raw, &logged)
		default:
			attrs = append(attrs, slog.Attr{Key: key, Value: jsonValue(key, raw)})
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
func jsonValue(key string, raw json.RawMessage) slog.Value {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return slog.StringValue(string(raw))
	}
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
	return slog.StringValue(string(raw))
}

// fields are the attributes of the log contract a record may carry.
type fields struct {
	aggregation, fate, reason, state string
	duplicate, redelivered, busy     bool
	hasRows, hasLag                  bool
	rowsQuarantined                  int64
	watermark                        time.Time
	lagSeconds                       float64
}

func fieldsOf(r slog.Record) fields {
	var f fields
	r.Attrs(func(a slog.Attr) bool {
		v := a.Value.Resolve()
		switch a.Key {
		case "aggregation":
			f.aggregation = v.String()
		case "fate":
			f.fate = v.String()
		case "reason":
			f.reason = v.String()
		case "state":
			f.state = v.String()
		case "duplicate":
			f.duplicate = v.Kind() == slog.KindBool && v.Bool()
		case "redelivered":
			f.redelivered = v.Kind() == slog.KindBool && v.Bool()
		case "busy":
			f.busy = v.Kind() == slog.KindBool && v.Bool()
		case "rows_read":
			f.hasRows = true
		case "rows_quarantined":
			f.rowsQuarantined = intOf(v)
		case "watermark":
			if v.Kind() == slog.KindTime {
				f.watermark = v.Time()
			} else if t, ok := v.Any().(time.Time); ok {
				f.watermark = t
			}
		case "watermark_lag_seconds":
			f.hasLag = true
			if v.Kind() == slog.KindFloat64 {
				f.lagSeconds = v.Float64()
			} else {
				f.lagSeconds = float64(intOf(v))
			}
		}
		return true
	})
	return f
}

func intOf(v slog.Value) int64 {
	switch v.Kind() {
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return int64(min(v.Uint64(), 1<<62)) //nolint:gosec // bounded
	case slog.KindFloat64:
		return int64(v.Float64())
	}
	return 0
}

// observe reads one record as the log-based metrics do (the filters of
// terraform/logging_metrics.tf, by message and field).
func (m *Monitor) observe(r slog.Record, with []slog.Attr) {
	now := m.now().UTC()
	f := fieldsOf(r)
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.Level >= slog.LevelError {
		m.keepError(r, with, now)
	}
	switch {
	case r.Message == "order handled" && f.aggregation != "":
		g := m.gauge(f.aggregation)
		am := m.minute(now).agg(f.aggregation)
		switch f.fate {
		case "accepted":
			am.accepted++
			if g.unfolded.IsZero() {
				g.unfolded = now
			}
			am.systemLag = max(am.systemLag, seconds(now.Sub(g.unfolded)))
		case "too_late":
			am.tooLate++
		}
	case strings.HasSuffix(r.Message, "dead-lettered") && strings.HasPrefix(f.reason, "invalid") && !f.duplicate:
		// "message dead-lettered" and "undecodable push request
		// dead-lettered": alpipe/orders_invalid's lines, less the
		// redeliveries of a message already dead-lettered.
		m.minute(now).deadLetters++
	case f.hasRows:
		// The line that closes a file (alpipe/ingest_files).
		mm := m.minute(now)
		if f.state == "DONE" && !f.redelivered {
			mm.filesLoaded++
		}
		mm.rowsQuarantined += f.rowsQuarantined
	case f.aggregation != "" && f.hasLag && !f.busy:
		// A tick's line (alpipe/watermark_lag_seconds): "tick", or "tick
		// incomplete", which folded what it could.
		g := m.gauge(f.aggregation)
		am := m.minute(now).agg(f.aggregation)
		am.freshness = int64(f.lagSeconds)
		g.watermark = f.watermark
		if !g.unfolded.IsZero() {
			am.systemLag = max(am.systemLag, seconds(now.Sub(g.unfolded)))
			if r.Message == "tick" {
				g.unfolded = time.Time{}
			}
		}
	}
}

func seconds(d time.Duration) int64 { return int64(max(d, 0) / time.Second) }

func (m *Monitor) gauge(agg string) *aggGauge {
	g, ok := m.aggs[agg]
	if !ok {
		g = &aggGauge{}
		m.aggs[agg] = g
	}
	return g
}

// minute returns the sample of t's minute, adding it (and dropping the
// oldest past max) when there is none.
func (m *Monitor) minute(t time.Time) *minute {
	at := t.Truncate(time.Minute)
	i, found := slices.BinarySearchFunc(m.minutes, at, func(s *minute, at time.Time) int { return s.at.Compare(at) })
	if found {
		return m.minutes[i]
	}
	s := &minute{at: at, aggs: map[string]*aggMinute{}}
	m.minutes = slices.Insert(m.minutes, i, s)
	if len(m.minutes) > m.max {
		m.minutes = slices.Delete(m.minutes, 0, len(m.minutes)-m.max)
	}
	return s
}

func (s *minute) agg(name string) *aggMinute {
	a, ok := s.aggs[name]
	if !ok {
		a = &aggMinute{freshness: -1}
		s.aggs[name] = a
	}
	return a
}

// keepError keeps r as a person reads it in the log: its message, then
// its fields as key=value.
func (m *Monitor) keepError(r slog.Record, with []slog.Attr, now time.Time) {
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool {
		if b.Len() > maxErrorText {
			return false
		}
		b.WriteString(" " + a.Key + "=" + a.Value.Resolve().String())
		return true
	}
	for _, a := range with {
		add(a)
	}
	r.Attrs(add)
	text := b.String()
	if len(text) > maxErrorText {
		text = strings.ToValidUTF8(text[:maxErrorText], "") + "…"
	}
	m.errs = append(m.errs, ErrorLine{At: now, Logged: r.Time.UTC(), Text: text})
	if len(m.errs) > MonitorErrors {
		m.errs = slices.Delete(m.errs, 0, len(m.errs)-MonitorErrors)
	}
}

// Monitoring is the page's monitoring panel (Snapshot.Monitor): the
// samples of one aggregation over a range of processing time.
type Monitoring struct {
	// From and Until bound the samples, in processing time (the server's
	// clock, a virtual one on a story): what happened when, not the event
	// times the sales charts are drawn on.
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Minutes are the minutes of the range in which something happened,
	// oldest first; the last is the current minute, with the gauges as
	// they stand now.
	Minutes []MinuteSample `json:"minutes"`
	// Now is where the gauges stand at Until: the last minute's sample
	// holds the largest system lag of that minute, which a tick may
	// since have brought to 0.
	Now Gauges `json:"now"`
	// Hours are the files loaded and rows quarantined per hour, of the
	// hours in which a file closed.
	Hours []HourSample `json:"hours"`
	// Backlog is null where no Pub/Sub subscription stands between the
	// publisher and the function (alpipe serve: each order is pushed
	// straight to AggregateOrders); BacklogNote says so.
	Backlog     *Backlog `json:"backlog"`
	BacklogNote string   `json:"backlog_note,omitempty"`
	// Errors are the newest ERROR lines, newest first.
	Errors []ErrorLine `json:"errors"`
}

// MinuteSample is one minute of one aggregation.
type MinuteSample struct {
	At time.Time `json:"at"` // the minute's start
	// FreshnessSeconds is data freshness, processing time minus the
	// watermark, as the minute's last tick (or, for the current minute,
	// now) sees it; null before any tick.
	FreshnessSeconds *int64 `json:"freshness_seconds"`
	// SystemLagSeconds is system lag: the largest age in the minute of the
	// oldest order accepted and not yet folded by a tick.
	SystemLagSeconds int64 `json:"system_lag_seconds"`
	Accepted         int64 `json:"accepted"`     // orders accepted in the minute
	TooLate          int64 `json:"too_late"`     // orders dropped as too late
	DeadLetters      int64 `json:"dead_letters"` // invalid messages (every aggregation's)
}

// Gauges are data freshness and system lag at one moment.
type Gauges struct {
	FreshnessSeconds *int64 `json:"freshness_seconds"` // null before any tick
	SystemLagSeconds int64  `json:"system_lag_seconds"`
}

// HourSample is one hour of file loads.
type HourSample struct {
	At              time.Time `json:"at"`
	FilesLoaded     int64     `json:"files_loaded"`
	RowsQuarantined int64     `json:"rows_quarantined"`
}

// Backlog is what Pub/Sub says of the subscription: undelivered messages
// and the age of the oldest unacknowledged one.
type Backlog struct {
	Undelivered             int64 `json:"undelivered"`
	OldestUnackedAgeSeconds int64 `json:"oldest_unacked_age_seconds"`
}

// ErrorLine is one ERROR log line.
type ErrorLine struct {
	At     time.Time `json:"at"`     // processing time
	Logged time.Time `json:"logged"` // the line's own time, as the log file has it
	Text   string    `json:"text"`
}

// localBacklogNote says why the local panel has no backlog.
const localBacklogNote = "no Pub/Sub here: alpipe publish pushes each order straight to AggregateOrders, so nothing waits; in production the Cloud Monitoring dashboard shows the backlog of pedidos-nuevos"

// Read returns aggregation's samples in [from, until] and the newest ERROR
// lines; until is also the current minute, whose gauges are those of now.
func (m *Monitor) Read(aggregation string, from, until time.Time) Monitoring {
	from, until = from.UTC(), until.UTC()
	out := Monitoring{From: from, Until: until, Minutes: []MinuteSample{}, Hours: []HourSample{}, Errors: []ErrorLine{}, BacklogNote: localBacklogNote}
	m.mu.Lock()
	defer m.mu.Unlock()
	current := until.Truncate(time.Minute)
	for _, s := range m.minutes {
		if s.at.Before(from.Truncate(time.Minute)) || s.at.After(until) {
			continue
		}
		ms := MinuteSample{At: s.at, DeadLetters: s.deadLetters}
		if a, ok := s.aggs[aggregation]; ok {
			ms.Accepted, ms.TooLate, ms.SystemLagSeconds = a.accepted, a.tooLate, a.systemLag
			if a.freshness >= 0 {
				ms.FreshnessSeconds = &a.freshness
			}
		}
		out.Minutes = append(out.Minutes, ms)
		if s.filesLoaded > 0 || s.rowsQuarantined > 0 {
			h := s.at.Truncate(time.Hour)
			if n := len(out.Hours); n == 0 || !out.Hours[n-1].At.Equal(h) {
				out.Hours = append(out.Hours, HourSample{At: h})
			}
			out.Hours[len(out.Hours)-1].FilesLoaded += s.filesLoaded
			out.Hours[len(out.Hours)-1].RowsQuarantined += s.rowsQuarantined
		}
	}
	// The gauges now: a page open between ticks sees freshness grow and
	// the unfolded orders age, as they do.
	if g, ok := m.aggs[aggregation]; ok && !current.Before(from.Truncate(time.Minute)) {
		n := len(out.Minutes)
		if n == 0 || !out.Minutes[n-1].At.Equal(current) {
			out.Minutes = append(out.Minutes, MinuteSample{At: current})
			n++
		}
		last := &out.Minutes[n-1]
		if !g.watermark.IsZero() {
			f := seconds(until.Sub(g.watermark))
			last.FreshnessSeconds = &f
			out.Now.FreshnessSeconds = &f
		}
		if !g.unfolded.IsZero() {
			out.Now.SystemLagSeconds = seconds(until.Sub(g.unfolded))
			last.SystemLagSeconds = max(last.SystemLagSeconds, out.Now.SystemLagSeconds)
		}
	}
	for i := len(m.errs) - 1; i >= 0; i-- {
		out.Errors = append(out.Errors, m.errs[i])
	}
	return out
}
