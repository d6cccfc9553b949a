package bigquery

import (
	"fmt"
	"os"
	"testing"
)

// TestMain stops the GoogleSQL emulators and prints how much ran on them
// (shown by go test -v, or run in the package's folder).
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.eng != nil {
		fmt.Println(shared.eng.summary())
	} else if shared.skip != "" {
		fmt.Println("GoogleSQL: not run:", shared.skip)
	}
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
	os.Exit(code)
}
