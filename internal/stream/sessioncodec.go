package stream

import (
	"time"

	"github.com/alpinashop/alpipe/internal/numeric"
	"github.com/alpinashop/alpipe/internal/window"
)

// storedSession is window.Session as a part stores it (sessionsPart.Stored):
// short names and times as Unix nanoseconds (0: none) take about half the
// bytes of window.Session's JSON, and the parts are what every tick reads
// and writes (TestSessionBytes, BenchmarkSessionTick).
type (
	storedSession struct {
		Start   int64           `json:"s"`
		End     int64           `json:"e"`
		State   storedState     `json:"t"`
		Sum     storedPartial   `json:"u"`
		Retired []storedRetired `json:"r,omitempty"`
	}
	storedRetired struct {
		Start int64       `json:"s"`
		End   int64       `json:"e"`
		State storedState `json:"t"`
	}
	storedState struct {
		NextIndex int64               `json:"n,omitempty"`
		Emitted   storedMeasures      `json:"m"`
		OnTime    window.OnTimeStatus `json:"o,omitempty"`
	}
	storedPartial struct {
		Measures     storedMeasures `json:"m"`
		OnTime       bool           `json:"o,omitempty"`
		Epoch        int64          `json:"e,omitempty"`
		PendingSince int64          `json:"p,omitempty"`
		MaxEventTime int64          `json:"x,omitempty"`
		LastAccepted int64          `json:"l,omitempty"`
	}
	storedMeasures struct {
		Importe  numeric.Dec `json:"i"`
		Pedidos  int64       `json:"p,omitempty"`
		Unidades int64       `json:"u,omitempty"`
	}
)

func storeSessions(ss []window.Session) []storedSession {
	out := make([]storedSession, len(ss))
	for i, x := range ss {
		out[i] = storedSession{Start: nanos(x.Start), End: nanos(x.End), State: storeState(x.State), Sum: storedPartial{
			Measures: storedMeasures(x.Sum.Measures), OnTime: x.Sum.OnTime, Epoch: x.Sum.Epoch, PendingSince: nanos(x.Sum.PendingSince),
			MaxEventTime: nanos(x.Sum.MaxEventTime), LastAccepted: nanos(x.Sum.LastAccepted),
		}}
		for _, r := range x.Retired {
			out[i].Retired = append(out[i].Retired, storedRetired{Start: nanos(r.Start), End: nanos(r.End), State: storeState(r.State)})
		}
	}
	return out
}

func loadSessions(in []storedSession) []window.Session {
	out := make([]window.Session, len(in))
	for i, x := range in {
		out[i] = window.Session{Start: instant(x.Start), End: instant(x.End), State: x.State.paneState(), Sum: window.Partial{
			Measures: window.Measures(x.Sum.Measures), OnTime: x.Sum.OnTime, Epoch: x.Sum.Epoch, PendingSince: instant(x.Sum.PendingSince),
			MaxEventTime: instant(x.Sum.MaxEventTime), LastAccepted: instant(x.Sum.LastAccepted),
		}}
		for _, r := range x.Retired {
			out[i].Retired = append(out[i].Retired, window.Retired{Start: instant(r.Start), End: instant(r.End), State: r.State.paneState()})
		}
	}
	return out
}

func storeState(s window.PaneState) storedState {
	return storedState{NextIndex: s.NextIndex, Emitted: storedMeasures(s.Emitted), OnTime: s.OnTime}
}

func (s storedState) paneState() window.PaneState {
	return window.PaneState{NextIndex: s.NextIndex, Emitted: window.Measures(s.Emitted), OnTime: s.OnTime}
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func instant(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
