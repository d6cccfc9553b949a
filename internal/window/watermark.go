package window

import "time"

// WatermarkState is the aggregation-wide watermark and its inputs. The timer
// tick is its only writer. Zero times mean "none yet".
//
// MaxEventTime and LastAccepted are folded in from the shards by every tick
// (Observe) and kept here because shards are deleted when their window
// expires, while the idle rule still needs the last acceptance time.
type WatermarkState struct {
	Watermark    time.Time `json:"watermark,omitzero"`      // W
	MaxEventTime time.Time `json:"max_event_time,omitzero"` // M: newest event time of an accepted order
	LastAccepted time.Time `json:"last_accepted,omitzero"`  // last: processing time of the last accepted order
}

// Observe folds in the newest event time and acceptance time seen in a
// (window, key)'s shards (Content.MaxEventTime, Content.LastAccepted).
// Both only ever move forward, so observing the same shards twice is harmless.
func (ws WatermarkState) Observe(maxEventTime, lastAccepted time.Time) WatermarkState {
	if maxEventTime.After(ws.MaxEventTime) {
		ws.MaxEventTime = maxEventTime.UTC()
	}
	if lastAccepted.After(ws.LastAccepted) {
		ws.LastAccepted = lastAccepted.UTC()
	}
	return ws
}

// AdvanceWatermark applies the tick's rule at processing time now:
//
//	M_eff = now            if now - last >= I (the source is idle)
//	        min(M, now)    otherwise
//	W     = max(W, M_eff - D)
//
// so W never decreases, never passes now - D and ignores event times from
// clocks that run ahead.
//
// Before any order has been accepted (LastAccepted zero) W does not move and
// stays at minus infinity (zero). This is what Beam's PubsubUnboundedSource
// does: it advances an idle subscription's watermark to now only once it has
// received something. It keeps a fresh deployment from declaring the backlog
// of a subscription too late before reading any of it; there are no windows
// to close until the first order arrives anyway.
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
