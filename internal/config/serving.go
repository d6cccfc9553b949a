package config

import (
	"fmt"
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

// killDelay is how long Cloud Run waits after SIGTERM before it kills an
// instance, the shortest of the platforms we deploy to. After the grace the
// server still waits up to 1 s for cancelled requests to record their
// failure (httpserve.DefaultCutWait) and then closes its clients, so the
// grace may take at most what is left: 8.5 s.
const (
	killDelay        = 10 * time.Second
	maxShutdownGrace = killDelay - time.Second - 500*time.Millisecond
)

// Validate reports every problem at once.
func (c Serving) Validate() error {
	var probs []string
	if c.ShutdownGrace <= 0 || c.ShutdownGrace > maxShutdownGrace {
		probs = append(probs, fmt.Sprintf("SHUTDOWN_GRACE=%s: want more than 0 and at most %s (Cloud Run kills an instance %s after SIGTERM; the cancelled requests and the clients' close need the rest)", c.ShutdownGrace, maxShutdownGrace, killDelay))
	}
	if c.RequestTimeoutSeconds < 0 {
		probs = append(probs, fmt.Sprintf("CLOUD_RUN_TIMEOUT_SECONDS=%d is negative", c.RequestTimeoutSeconds))
	}
	return joinProblems("server", probs)
}

// RequestTimeout is the per-request deadline, 0 for none.
func (c Serving) RequestTimeout() time.Duration {
	return time.Duration(c.RequestTimeoutSeconds) * time.Second
}
