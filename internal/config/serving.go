package config

import (
	"strconv"
	"time"
)

// Serving configures how a process serves its functions and how it stops:
// cmd/server on Cloud Run and `alpipe serve` on a laptop read the same
// variables.
type Serving struct {
	// ShutdownGrace is how long requests in flight may run after SIGTERM
	// before their contexts are cancelled. Cloud Run kills the instance
	// 10 s after SIGTERM, so the grace plus the time a cancelled ingest
	// needs to record its failure must stay under that.
	ShutdownGrace time.Duration `env:"SHUTDOWN_GRACE, default=8s"`
	// RequestTimeoutSeconds bounds each request's context, as the functions
	// framework does with the same variable; 0 leaves requests to their
	// callers' deadlines.
	RequestTimeoutSeconds int `env:"CLOUD_RUN_TIMEOUT_SECONDS"`
}

// After the grace the server still waits up to 1 s for cancelled requests
// to record their failure (httpserve.DefaultCutWait) and then closes its
// clients, so of Cloud Run's 10 s kill delay the grace may take 8.5 s.
const (
	killDelay        = 10 * time.Second
	maxShutdownGrace = killDelay - time.Second - 500*time.Millisecond
)

// Validate reports every problem at once.
func (c Serving) Validate() error {
	var p problems
	p.add(c.ShutdownGrace > 0 && c.ShutdownGrace <= maxShutdownGrace, "SHUTDOWN_GRACE=%s: want more than 0 and at most %s (Cloud Run kills an instance %s after SIGTERM; the cancelled requests and the clients' close need the rest)", c.ShutdownGrace, maxShutdownGrace, killDelay)
	p.add(c.RequestTimeoutSeconds >= 0, "CLOUD_RUN_TIMEOUT_SECONDS=%d is negative", c.RequestTimeoutSeconds)
	return joinProblems("server", p)
}

// RequestTimeout is the per-request deadline, 0 for none.
func (c Serving) RequestTimeout() time.Duration {
	return time.Duration(c.RequestTimeoutSeconds) * time.Second
}

// Server configures the process of cmd/server around the functions: which
// function it serves and where. Cloud Run sets PORT and K_SERVICE; Terraform
// sets FUNCTION_TARGET.
type Server struct {
	// Target is the one function served at "/"; empty serves every function
	// at "/<Name>".
	Target string `env:"FUNCTION_TARGET"`
	Port   string `env:"PORT, default=8080"`
	// ClockFile replaces the process clock by the RFC 3339 time held in a
	// file, re-read on every reading, so that the production-parity stack
	// can play hours of event time in seconds through the very binary Cloud
	// Run runs. It is refused unless the state store is the Firestore
	// emulator, so it can never steer production.
	ClockFile         string `env:"ALPIPE_CLOCK_FILE"`
	FirestoreEmulator string `env:"FIRESTORE_EMULATOR_HOST"`
}

// Validate reports every problem at once.
func (c Server) Validate() error {
	var p problems
	n, err := strconv.Atoi(c.Port)
	p.add(err == nil && n >= 1 && n <= 65535, "PORT=%q is not a TCP port", c.Port)
	p.add(c.ClockFile == "" || c.FirestoreEmulator != "", "ALPIPE_CLOCK_FILE is a test clock: it is accepted only with FIRESTORE_EMULATOR_HOST set, never against real Firestore")
	return joinProblems("server", p)
}

// Query bounds the answers of `alpipe serve`'s /_local/query, the one door
// through which any SQL reaches the embedded warehouse: a SELECT of 20 M
// rows once held 4.4 GB and ran 100 s. The answer streams, so memory does
// not grow with it; these caps bound what a client receives and how long
// the engine works for it, and each is named in the error when it stops an
// answer.
type Query struct {
	// MaxRows: a million rows is a month of order lines for a reconcile or
	// an export to a spreadsheet (which stops at 1,048,576).
	MaxRows int64 `env:"ALPIPE_QUERY_MAX_ROWS, default=1000000"`
	// MaxBytes counts the answer's body: 64 MiB holds those million rows at
	// their usual 50 bytes, and the CLI's table, which must hold every row
	// to align them, stays a few hundred MB at most.
	MaxBytes int64 `env:"ALPIPE_QUERY_MAX_BYTES, default=67108864"`
	// Timeout: the laptop's tables answer in well under a second; a minute
	// lets a cold scan of a large backfill finish and stops a runaway join.
	Timeout time.Duration `env:"ALPIPE_QUERY_TIMEOUT, default=60s"`
}

// Validate reports every problem at once.
func (c Query) Validate() error {
	var p problems
	p.add(c.MaxRows >= 1, "ALPIPE_QUERY_MAX_ROWS=%d must be at least 1", c.MaxRows)
	p.add(c.MaxBytes >= 1024, "ALPIPE_QUERY_MAX_BYTES=%d must be at least 1024", c.MaxBytes)
	p.add(c.Timeout > 0, "ALPIPE_QUERY_TIMEOUT=%s must be positive", c.Timeout)
	return joinProblems("query", p)
}
