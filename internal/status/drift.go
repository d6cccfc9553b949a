package status

import (
	"sort"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// DriftLine is one column by which files of a feed differed from their
// contract since Report.Since: when it was first and last seen and in how
// many files, so that an ERP change is dated, not just noticed.
type DriftLine struct {
	Feed      string    `json:"feed"`
	Change    string    `json:"change"` // "added" (not loaded) or "missing"
	Column    string    `json:"column"`
	Files     int       `json:"files"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// driftLines summarises the drift of the records started since since,
// added columns first, then by feed and column.
func driftLines(recs []ledger.Record, since time.Time) []DriftLine {
	type key struct{ feed, change, column string }
	lines := map[key]*DriftLine{}
	note := func(r ledger.Record, change string, cols []string) {
		for _, c := range cols {
			k := key{r.Feed, change, c}
			l := lines[k]
			if l == nil {
				l = &DriftLine{Feed: r.Feed, Change: change, Column: c, FirstSeen: r.StartedAt, LastSeen: r.StartedAt}
				lines[k] = l
			}
			l.Files++
			if r.StartedAt.Before(l.FirstSeen) {
				l.FirstSeen = r.StartedAt
			}
			if r.StartedAt.After(l.LastSeen) {
				l.LastSeen = r.StartedAt
			}
		}
	}
	for _, r := range recs {
		if r.Drift == nil || r.StartedAt.Before(since) {
			continue
		}
		note(r, "added", r.Drift.Added)
		note(r, "missing", r.Drift.Missing)
	}
	if len(lines) == 0 {
		return nil
	}
	out := make([]DriftLine, 0, len(lines))
	for _, l := range lines {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Change != b.Change {
			return a.Change == "added"
		}
		if a.Feed != b.Feed {
			return a.Feed < b.Feed
		}
		return a.Column < b.Column
	})
	return out
}
