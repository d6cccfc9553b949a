package local

import (
	"time"

	"github.com/alpinashop/alpipe/internal/clock"
)

// Clock is the processing-time clock of a local server, clock.Local; the
// names below stay so that callers of Options keep reading local.Clock.
type Clock = clock.Local

// WallClock follows the machine's clock.
func WallClock() *Clock { return clock.Wall() }

// VirtualClock starts at start and moves only by Set.
func VirtualClock(start time.Time) *Clock { return clock.Virtual(start) }
