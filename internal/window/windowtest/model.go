package windowtest

import "time"

// Kind is what an Event does.
type Kind string

const (
	Deliver Kind = "deliver" // one Pub/Sub message
	Tick    Kind = "tick"    // the timer, at processing time Now
)

// Fate is what became of an (order, window).
type Fate string

const (
	Accepted Fate = "accepted"
	Dropped  Fate = "dropped" // too late
)

// Drop is a too-late (order, window), as the late-drops sink records it.
type Drop struct {
	PedidoID    string
	WindowStart time.Time
	Watermark   time.Time
	ReceivedAt  time.Time
}

// OrderWindow names an (order, window) of one aggregation: the unit that is
// accepted or dropped too late.
type OrderWindow struct {
	PedidoID    string
	WindowStart time.Time // UTC
}
