package config

import (
	"fmt"
	"time"
)

// Sweep configures SweepLanding, the scheduled function that ingests landing
// objects whose finalize events were all lost (Eventarc keeps an undelivered
// event for 24 h and has no dead-letter topic). It ingests through the same
// path as IngestCSV, so it reads the whole IngestCSV configuration too.
type Sweep struct {
	Ingest
	// Window is how far back the sweeper looks: objects created earlier were
	// either handled or need a person (alpipe backfill).
	Window time.Duration `env:"SWEEP_WINDOW, default=72h"`
	// Grace leaves young objects to Eventarc, whose own retries would
	// otherwise race the sweeper for every file of a normal night.
	Grace time.Duration `env:"SWEEP_GRACE, default=30m"`
	// MaxObjects bounds one run, so that a day-long outage is caught up over
	// several scheduler ticks instead of one request that times out.
	MaxObjects  int `env:"SWEEP_MAX_OBJECTS, default=100"`
	Concurrency int `env:"SWEEP_CONCURRENCY, default=2"`
}

// Validate reports every problem at once.
func (c Sweep) Validate() error {
	probs := c.problems()
	if c.Grace <= 0 {
		probs = append(probs, fmt.Sprintf("SWEEP_GRACE=%s must be positive (Eventarc must get the first chance)", c.Grace))
	}
	if c.Window <= c.Grace {
		probs = append(probs, fmt.Sprintf("SWEEP_WINDOW=%s must exceed SWEEP_GRACE=%s", c.Window, c.Grace))
	}
	if c.MaxObjects < 1 {
		probs = append(probs, fmt.Sprintf("SWEEP_MAX_OBJECTS=%d is below 1", c.MaxObjects))
	}
	if c.Concurrency < 1 || c.Concurrency > 16 {
		probs = append(probs, fmt.Sprintf("SWEEP_CONCURRENCY=%d: want 1 to 16", c.Concurrency))
	}
	return joinProblems("SweepLanding", probs)
}
