package config

import (
	"fmt"
	"time"
)

// Query bounds the answers of `alpipe serve`'s /_local/query, the one door
// through which any SQL reaches the embedded warehouse: a SELECT of 20 M
// rows once held 4.4 GB and ran 100 s. The answer streams, so memory does
// not grow with it; these caps bound what a client receives and how long
// the engine works for it. Each is named in the error when it stops an
// answer.
type Query struct {
	// MaxRows: a million rows is a month of order lines for a reconcile or
	// an export to a spreadsheet (which stops at 1,048,576), far beyond a
	// terminal's use.
	MaxRows int64 `env:"ALPIPE_QUERY_MAX_ROWS, default=1000000"`
	// MaxBytes counts the answer's body: 64 MiB holds those million rows at
	// their usual 50 bytes, and the CLI's table, which must hold every row
	// to align them, stays a few hundred MB at most.
	MaxBytes int64 `env:"ALPIPE_QUERY_MAX_BYTES, default=67108864"`
	// Timeout: a query of the laptop's tables answers in well under a
	// second; a minute lets a cold scan of a large backfill finish and
	// stops a runaway join long before it holds the engine for minutes.
	Timeout time.Duration `env:"ALPIPE_QUERY_TIMEOUT, default=60s"`
}

// Validate reports every problem at once.
func (c Query) Validate() error {
	var probs []string
	if c.MaxRows < 1 {
		probs = append(probs, fmt.Sprintf("ALPIPE_QUERY_MAX_ROWS=%d must be at least 1", c.MaxRows))
	}
	if c.MaxBytes < 1024 {
		probs = append(probs, fmt.Sprintf("ALPIPE_QUERY_MAX_BYTES=%d must be at least 1024", c.MaxBytes))
	}
	if c.Timeout <= 0 {
		probs = append(probs, fmt.Sprintf("ALPIPE_QUERY_TIMEOUT=%s must be positive", c.Timeout))
	}
	return joinProblems("query", probs)
}
