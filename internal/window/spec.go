package window

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Accumulation says what a pane carries.
type Accumulation string

const (
	// Accumulating panes carry the window's totals so far; the latest pane is
	// the current value.
	Accumulating Accumulation = "ACCUMULATING"
	// Discarding panes carry the change since the previous pane; the current
	// value is the sum of the panes.
	Discarding Accumulation = "DISCARDING"
)

// TickInterval is the shortest period of the watermark timer (TICK_INTERVAL;
// config.Tick checks declarations against the deployment's own). Every pane
// after the window's end comes from a tick, so Validate refuses a shorter
// late delay.
const TickInterval = 30 * time.Second

// Spec configures one aggregation. Start from Defaults and override.
type Spec struct {
	Name            string        // stable aggregation name, also in table names and pane identities
	KeyField        string        // order field that keys the aggregation; names the key column
	WindowSize      time.Duration // S: window size, a whole number of seconds
	Period          time.Duration // P: sliding period, dividing S (Beam's SlidingWindows); 0: fixed windows (P = S)
	Gap             time.Duration // G: session gap (Beam's Sessions); > 0 makes session windows, with S and P zero
	OutOfOrderness  time.Duration // D: how far the watermark trails the newest event time
	IdleTimeout     time.Duration // I: no accepted order for this long makes the source idle
	EarlyDelay      time.Duration // E: EARLY pane once the first un-emitted change is this old
	AllowedLateness time.Duration // L: how long after the window end late orders still count
	LateDelay       time.Duration // Ld: a tick emits the LATE pane once the first un-emitted late change is this old; at least TickInterval
	Accumulation    Accumulation
}

// Defaults returns the specification's defaults: ventas_hora_pais.
func Defaults() Spec {
	return Spec{
		Name:            "ventas_hora_pais",
		KeyField:        "pais",
		WindowSize:      time.Hour,
		OutOfOrderness:  10 * time.Minute,
		IdleTimeout:     5 * time.Minute,
		EarlyDelay:      time.Minute,
		AllowedLateness: 2 * time.Hour,
		LateDelay:       time.Minute,
		Accumulation:    Accumulating,
	}
}

var (
	nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
	// The key names a column of the panes table.
	keyRE       = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)
	paneColumns = map[string]bool{
		"aggregation": true, "window_start": true, "window_end": true,
		"importe": true, "pedidos": true, "unidades": true, "pane_index": true,
		"timing": true, "accumulation": true, "watermark": true, "emitted_at": true,
		"merged_into": true,
	}
)

// Validate reports every problem of s at once.
func (s Spec) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if !nameRE.MatchString(s.Name) {
		bad("name %q must be 1-63 characters of a-z, 0-9 and _, starting with a letter (it names tables and documents)", s.Name)
	}
	switch {
	case !keyRE.MatchString(s.KeyField):
		bad("key field %q must be a column name: 1-63 characters of a-z, 0-9 and _, not starting with a digit", s.KeyField)
	case paneColumns[s.KeyField]:
		bad("key field %q collides with a column of the panes table", s.KeyField)
	}
	switch {
	case s.Gap < 0:
		bad("session gap %v must not be negative (0 means fixed or sliding windows)", s.Gap)
	case s.Gap == 0:
	case s.Gap%time.Second != 0:
		bad("session gap %v must be a whole number of seconds", s.Gap)
	case s.WindowSize != 0 || s.Period != 0:
		bad("session windows (gap %v) take no window size (%v) nor period (%v): a session spans its orders", s.Gap, s.WindowSize, s.Period)
	}
	switch {
	case s.Session():
	case s.WindowSize <= 0:
		bad("window size %v must be positive", s.WindowSize)
	case s.WindowSize%time.Second != 0:
		bad("window size %v must be a whole number of seconds", s.WindowSize)
	}
	switch {
	case s.Period < 0:
		bad("period %v must not be negative (0 means fixed windows)", s.Period)
	case s.Period == 0:
	case s.Period%time.Second != 0:
		bad("period %v must be a whole number of seconds", s.Period)
	case s.WindowSize > 0 && s.Period > s.WindowSize:
		bad("period %v must not exceed the window size %v", s.Period, s.WindowSize)
	case s.WindowSize > 0 && s.WindowSize%s.Period != 0:
		bad("period %v must divide the window size %v", s.Period, s.WindowSize)
	}
	if s.OutOfOrderness < 0 {
		bad("out-of-orderness %v must not be negative", s.OutOfOrderness)
	}
	if s.IdleTimeout <= 0 {
		bad("idle timeout %v must be positive", s.IdleTimeout)
	}
	if s.EarlyDelay < 0 {
		bad("early delay %v must not be negative", s.EarlyDelay)
	}
	if s.AllowedLateness < 0 {
		bad("allowed lateness %v must not be negative", s.AllowedLateness)
	}
	if s.LateDelay < TickInterval {
		bad("late delay %v must be at least the tick interval %v: a tick emits the LATE pane", s.LateDelay, TickInterval)
	}
	if s.Accumulation != Accumulating && s.Accumulation != Discarding {
		bad("accumulation %q must be %s or %s", s.Accumulation, Accumulating, Discarding)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("aggregation %q: %w", s.Name, errors.Join(errs...))
}
