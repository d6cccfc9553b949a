package dashboard

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Monitor answers Dataflow's monitoring questions on the local page (how
// fresh is the data, how far behind is processing, orders a minute, dead
// letters, drops, errors) from the server's own log records: the lines the
// log-based metrics of terraform/logging_metrics.tf count in production. It
// keeps at most MonitorMinutes minutes with samples and MonitorErrors ERROR
// lines, so a server left running for weeks holds a few hundred kilobytes.
type Monitor struct {
	now func() time.Time

	mu      sync.Mutex
	minutes []*minute // oldest first, at most MonitorMinutes
	aggs    map[string]*aggGauge
	errs    []ErrorLine // oldest first
}

const (
	MonitorMinutes = 24 * 60 // a day of minutes with activity in every one
	MonitorErrors  = 20
	// maxErrorText bounds one kept line: a megabyte of payload does not
	// fill the ring.
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

type aggMinute struct {
	accepted, tooLate int64
	freshness         int64 // now - W at the minute's last tick; -1: no tick
	// systemLag is the largest age, in the minute, of the oldest order
	// accepted and not yet folded by a tick.
	systemLag int64
}

type aggGauge struct {
	watermark time.Time // as the last tick said; zero before any
	unfolded  time.Time // when the oldest order not yet folded was accepted; zero: none
}

// NewMonitor reads processing time from now, the server's clock.
func NewMonitor(now func() time.Time) *Monitor {
	return &Monitor{now: now, aggs: map[string]*aggGauge{}}
}

// observe reads one record as the log-based metrics do (the filters of
// terraform/logging_metrics.tf, by message and field).
func (m *Monitor) observe(r slog.Record, with []slog.Attr) {
	now := m.now().UTC()
	f := fieldsOf(r)
	agg := f.str("aggregation")
	m.mu.Lock()
	defer m.mu.Unlock()
	if r.Level >= slog.LevelError {
		m.keepError(r, with, now)
	}
	switch {
	case r.Message == "order handled" && agg != "":
		g := m.gauge(agg)
		am := m.minute(now).agg(agg)
		switch f.str("fate") {
		case "accepted":
			am.accepted++
			if g.unfolded.IsZero() {
				g.unfolded = now
			}
			am.systemLag = max(am.systemLag, seconds(now.Sub(g.unfolded)))
		case "too_late":
			am.tooLate++
		}
	case strings.HasSuffix(r.Message, "dead-lettered") && strings.HasPrefix(f.str("reason"), "invalid") && !f.flag("duplicate"):
		// "message dead-lettered" and "undecodable push request
		// dead-lettered": alpipe/orders_invalid's lines, less the
		// redeliveries of a message already dead-lettered.
		m.minute(now).deadLetters++
	case f.has("rows_read"):
		// The line that closes a file (alpipe/ingest_files).
		mm := m.minute(now)
		if f.str("state") == "DONE" && !f.flag("redelivered") {
			mm.filesLoaded++
		}
		mm.rowsQuarantined += int64(f.number("rows_quarantined"))
	case agg != "" && f.has("watermark_lag_seconds") && !f.flag("busy"):
		// A tick's line (alpipe/watermark_lag_seconds): "tick", or "tick
		// incomplete", which folded what it could.
		g := m.gauge(agg)
		am := m.minute(now).agg(agg)
		am.freshness = int64(f.number("watermark_lag_seconds"))
		g.watermark, _ = f["watermark"].Any().(time.Time)
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
	if m.aggs[agg] == nil {
		m.aggs[agg] = &aggGauge{}
	}
	return m.aggs[agg]
}

// minute returns the sample of t's minute, adding it (and dropping the
// oldest past MonitorMinutes) when there is none.
func (m *Monitor) minute(t time.Time) *minute {
	at := t.Truncate(time.Minute)
	i, found := slices.BinarySearchFunc(m.minutes, at, func(s *minute, at time.Time) int { return s.at.Compare(at) })
	if found {
		return m.minutes[i]
	}
	s := &minute{at: at, aggs: map[string]*aggMinute{}}
	m.minutes = slices.Insert(m.minutes, i, s)
	if len(m.minutes) > MonitorMinutes {
		m.minutes = slices.Delete(m.minutes, 0, len(m.minutes)-MonitorMinutes)
	}
	return s
}

func (s *minute) agg(name string) *aggMinute {
	if s.aggs[name] == nil {
		s.aggs[name] = &aggMinute{freshness: -1}
	}
	return s.aggs[name]
}

// keepError keeps r as the log line reads: its message, then key=value.
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

// Monitoring is the page's monitoring panel: one aggregation's samples over
// [From, Until] of processing time (the server's clock), not the event
// times the sales charts are drawn on.
type Monitoring struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Minutes are those in which something happened, oldest first; the
	// last is the current minute, with the gauges as they stand now.
	Minutes []MinuteSample `json:"minutes"`
	// Now is where the gauges stand at Until: the last minute holds its
	// largest system lag, which a tick may since have brought to 0.
	Now   Gauges       `json:"now"`
	Hours []HourSample `json:"hours"` // those in which a file closed
	// Backlog is null where no Pub/Sub subscription stands between the
	// publisher and the function (alpipe serve); BacklogNote says so.
	Backlog     *Backlog    `json:"backlog"`
	BacklogNote string      `json:"backlog_note,omitempty"`
	Errors      []ErrorLine `json:"errors"` // newest first
}

type MinuteSample struct {
	At time.Time `json:"at"` // the minute's start
	// FreshnessSeconds is processing time minus the watermark as the
	// minute's last tick (the current minute: now) sees it.
	FreshnessSeconds *int64 `json:"freshness_seconds"`
	// SystemLagSeconds is the largest age in the minute of the oldest order
	// accepted and not yet folded by a tick.
	SystemLagSeconds int64 `json:"system_lag_seconds"`
	Accepted         int64 `json:"accepted"`
	TooLate          int64 `json:"too_late"`
	DeadLetters      int64 `json:"dead_letters"` // every aggregation's
}

type Gauges struct {
	FreshnessSeconds *int64 `json:"freshness_seconds"` // null before any tick
	SystemLagSeconds int64  `json:"system_lag_seconds"`
}

type HourSample struct {
	At              time.Time `json:"at"`
	FilesLoaded     int64     `json:"files_loaded"`
	RowsQuarantined int64     `json:"rows_quarantined"`
}

// Backlog is what Pub/Sub says of the orders subscription.
type Backlog struct {
	Undelivered             int64 `json:"undelivered"`
	OldestUnackedAgeSeconds int64 `json:"oldest_unacked_age_seconds"`
}

type ErrorLine struct {
	At     time.Time `json:"at"`     // processing time
	Logged time.Time `json:"logged"` // the line's own time
	Text   string    `json:"text"`
}

const localBacklogNote = "no Pub/Sub here: alpipe publish pushes each order straight to AggregateOrders, so nothing waits; in production the Cloud Monitoring dashboard shows the backlog of pedidos-nuevos"

// Read returns aggregation's samples in [from, until] and the newest ERROR
// lines; until's minute holds the gauges of now.
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
	out.Errors = append(out.Errors, m.errs...)
	slices.Reverse(out.Errors)
	return out
}
