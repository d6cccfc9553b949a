package config

import (
	"fmt"
	"strconv"
)

// Server configures the process of cmd/server around the functions: which
// function it serves and where. Cloud Run sets PORT and K_SERVICE; Terraform
// sets FUNCTION_TARGET.
type Server struct {
	// Target is the one function served at "/"; empty serves every function
	// at "/<Name>".
	Target string `env:"FUNCTION_TARGET"`
	Port   string `env:"PORT, default=8080"`
	// ClockFile replaces the process clock by the RFC 3339 time held in a
	// file, re-read on every reading. It exists so that the
	// production-parity stack can play hours of event time in seconds
	// through the very binary Cloud Run runs; it is refused unless the state
	// store is the Firestore emulator, so it can never steer production.
	ClockFile         string `env:"ALPIPE_CLOCK_FILE"`
	FirestoreEmulator string `env:"FIRESTORE_EMULATOR_HOST"`
}

// Validate reports every problem at once.
func (c Server) Validate() error {
	var probs []string
	if n, err := strconv.Atoi(c.Port); err != nil || n < 1 || n > 65535 {
		probs = append(probs, fmt.Sprintf("PORT=%q is not a TCP port", c.Port))
	}
	if c.ClockFile != "" && c.FirestoreEmulator == "" {
		probs = append(probs, "ALPIPE_CLOCK_FILE is a test clock: it is accepted only with FIRESTORE_EMULATOR_HOST set, never against real Firestore")
	}
	return joinProblems("server", probs)
}
