package reconcile

import (
	"fmt"
	"regexp"
)

// nameRE is window.Spec's rule for aggregation names.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

func checkName(agg string) error {
	if !nameRE.MatchString(agg) {
		return fmt.Errorf("aggregation %q: want 1-63 characters of a-z, 0-9 and _, starting with a letter", agg)
	}
	return nil
}
