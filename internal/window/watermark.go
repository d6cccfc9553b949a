package window

import "time"

// WatermarkState is the aggregation-wide watermark and its inputs, written
// only by the tick; zero times mean "none yet". The tick folds in the
// partial sums' times (Observe) because those are deleted when their window
// expires, while the idle rule still needs the last acceptance.
type WatermarkState struct {
	Watermark    time.Time `json:"watermark,omitzero"`      // W
	MaxEventTime time.Time `json:"max_event_time,omitzero"` // M: newest event time of an accepted order
	LastAccepted time.Time `json:"last_accepted,omitzero"`  // last: processing time of the last accepted order
}

// Observe folds in a cell's newest event and acceptance times; both only
// move forward, so observing twice is harmless.
func (ws WatermarkState) Observe(maxEventTime, lastAccepted time.Time) WatermarkState {
	ws.MaxEventTime = later(ws.MaxEventTime, maxEventTime)
	ws.LastAccepted = later(ws.LastAccepted, lastAccepted)
	return ws
}

// AdvanceWatermark applies the tick's rule at processing time now:
//
//	M_eff = now            if now - last >= I (the source is idle)
//	        min(M, now)    otherwise
//	W     = max(W, M_eff - D)
//
// so W never decreases, never passes now - D and ignores clocks that run
// ahead. Before any order (LastAccepted zero) W stays at minus infinity, as
// in Beam's PubsubUnboundedSource: a fresh deployment must not declare a
// subscription's backlog too late before reading any of it.
func (s Spec) AdvanceWatermark(ws WatermarkState, now time.Time) WatermarkState {
	if ws.LastAccepted.IsZero() {
		return ws
	}
	var meff time.Time
	switch {
	case now.Sub(ws.LastAccepted) >= s.IdleTimeout:
		meff = now
	case ws.MaxEventTime.IsZero():
		return ws // inconsistent input (acceptance without event time): hold W
	case ws.MaxEventTime.Before(now):
		meff = ws.MaxEventTime
	default:
		meff = now
	}
	if cand := meff.Add(-s.OutOfOrderness).UTC(); ws.Watermark.IsZero() || cand.After(ws.Watermark) {
		ws.Watermark = cand
	}
	return ws
}
