package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/render"
)

// ledgerStates are the states `status --state` accepts, in the order a
// person reads them.
var ledgerStates = []ledger.State{ledger.InProgress, ledger.Done, ledger.Rejected, ledger.Skipped, ledger.Duplicate, ledger.Failed}

// parseState reads --state case-insensitively and names the valid ones.
func parseState(s string) (ledger.State, error) {
	st := ledger.State(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(ledgerStates, st) {
		return st, nil
	}
	names := make([]string, len(ledgerStates))
	for i, v := range ledgerStates {
		names[i] = string(v)
	}
	return "", fmt.Errorf("status: --state %q is not a ledger state (want one of %s)", s, strings.Join(names, ", "))
}

// filesInState prints every ledger record in state, newest first, however
// old: "which files failed?" has no time horizon.
func filesInState(recs []ledger.Record, state ledger.State, max int, format string, stdout io.Writer) error {
	var mine []ledger.Record
	for _, r := range recs {
		if r.State == state {
			mine = append(mine, r)
		}
	}
	slices.SortStableFunc(mine, func(a, b ledger.Record) int { return b.StartedAt.Compare(a.StartedAt) })
	more := len(mine) - max
	if more > 0 {
		mine = mine[:max]
	}
	if format == "json" {
		return render.JSON(stdout, mine) // nil is [] there
	}
	if len(mine) == 0 {
		fmt.Fprintf(stdout, "no files in state %s\n", state)
		return nil
	}
	rows := make([][]string, 0, len(mine))
	for _, r := range mine {
		rows = append(rows, []string{render.When(r.StartedAt), fmt.Sprint(r.Key.Generation), "gs://" + r.Key.Bucket + "/" + r.Key.Object, oneLineReason(r.Reason)})
	}
	if err := render.Table(stdout, []string{"started", "generation", "object", "reason"}, rows, []render.Kind{render.Text, render.Int, render.Text, render.Text}); err != nil {
		return err
	}
	next := "alpipe status OBJECT shows one's history"
	if more > 0 {
		next = fmt.Sprintf("%d more: raise --files", more)
	}
	fmt.Fprintf(stdout, "(%s in state %s; %s)\n", render.Counted(len(mine), "file", "files"), state, next)
	return nil
}

func oneLineReason(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..." // runes, so an accented letter is never cut in two
	}
	return s
}

// watch runs report every interval until ctx ends (Ctrl-C), each time after
// a separator line with the time, so that a person can leave it open during
// a backfill. count > 0 stops after that many reports (tests).
func watch(ctx context.Context, interval time.Duration, count int, stdout io.Writer, report func() error) error {
	for i := 0; count <= 0 || i < count; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(interval):
			}
		}
		// No time of this machine here: the report carries the server's
		// clock, which may be a virtual one.
		fmt.Fprintf(stdout, "── report %d (every %s; Ctrl-C stops)\n", i+1, interval)
		if err := report(); err != nil {
			return err
		}
	}
	return nil
}
