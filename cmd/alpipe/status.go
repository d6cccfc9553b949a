package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/status"
)

func runStatus(ctx context.Context, c *cmdline, stdout io.Writer) error {
	since := c.Duration("since", status.DefaultSince, "how far back files and discarded orders count")
	files := c.Int("files", 50, "files listed, newest first")
	cloud := c.Bool("cloud", false, "read the backends the environment names (as the deployed functions do) instead of a local server")
	stateFlag := c.String("state", "", "list the files in this ledger `STATE`, however old (FAILED, IN_PROGRESS, DONE, REJECTED, SKIPPED, DUPLICATE)")
	every := c.Duration("watch", 0, "print the report again at this `INTERVAL` (e.g. 10s) until Ctrl-C")
	if err := c.parse(); err != nil {
		return err
	}
	pos, format := c.pos, c.format
	if *every < 0 || (*every > 0 && *every < time.Second) {
		return c.usagef("--watch wants an interval of at least 1s, e.g. --watch 10s")
	}
	if *every > 0 {
		again := append([]string{"status"}, withoutFlag(c.args, "watch")...)
		return watch(ctx, *every, 0, stdout, func() error { return dispatch(ctx, again, stdout) })
	}
	if *stateFlag != "" {
		if len(pos) > 0 {
			return c.usagef("--state lists files; it does not take an OBJECT")
		}
		st, err := parseState(*stateFlag)
		if err != nil {
			return err
		}
		if *files <= 0 {
			return c.usagef("--files must be positive")
		}
		list := c.srv.Ledger
		if *cloud {
			app, err := cloudApp(ctx, "status --cloud", functions.IngestCSVName)
			if err != nil {
				return err
			}
			defer app.Close()
			list = app.Ledger.List
		}
		recs, err := list(ctx)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		return filesInState(recs, st, *files, format, stdout)
	}
	if *since <= 0 || *files <= 0 {
		return c.usagef("--since and --files must be positive")
	}
	if len(pos) == 1 {
		if *cloud {
			return fmt.Errorf("status OBJECT reads a local server's ledger; --cloud is not supported with OBJECT yet")
		}
		return objectHistory(ctx, c.srv, pos[0], format, stdout)
	}
	var rep status.Report
	var err error
	if *cloud {
		app, err := cloudApp(ctx, "status --cloud", functions.IngestCSVName, functions.AdvanceWatermarkName)
		if err != nil {
			return err
		}
		defer app.Close()
		rep = status.BuildReport(ctx, app.StatusSources(), status.Options{Since: *since, MaxFiles: *files})
	} else if rep, err = c.srv.Status(ctx, *since, *files); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	return report(stdout, format, rep, func(w io.Writer) error { return status.WriteText(w, rep) })
}

// objectHistory prints every ledger record of one landing object, oldest
// generation first, so that "what happened to this file" needs no SQL.
func objectHistory(ctx context.Context, srv client.Server, arg, format string, stdout io.Writer) error {
	bucket, name, gs, err := reingest.ParseGS(arg)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	recs, err := srv.Ledger(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	mine := slices.DeleteFunc(recs, func(r ledger.Record) bool {
		return r.Key.Object != name || gs && r.Key.Bucket != bucket
	})
	if len(mine) == 0 {
		return fmt.Errorf("status: the ledger has no record of %q (alpipe status lists recent files)", arg)
	}
	slices.SortFunc(mine, func(a, b ledger.Record) int { return cmp.Compare(a.Key.Generation, b.Key.Generation) })
	if format == "json" {
		return render.JSON(stdout, mine)
	}
	for i, r := range mine {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printRecord(stdout, r)
		fmt.Fprintf(stdout, "  attempt: %d", r.Attempt)
		if !r.StartedAt.IsZero() {
			fmt.Fprintf(stdout, "  started: %s", render.When(r.StartedAt))
		}
		if !r.FinishedAt.IsZero() {
			fmt.Fprintf(stdout, "  finished: %s (took %s)", render.When(r.FinishedAt), render.Duration(r.FinishedAt.Sub(r.StartedAt)))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// withoutFlag drops --name and -name with its value from args, so that
// --watch can re-run the same command.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		bare := strings.TrimLeft(a, "-")
		switch {
		case a != bare && bare == name:
			i++ // its value is the next argument
		case a != bare && strings.HasPrefix(bare, name+"="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// ledgerStates are in the order a person reads them.
var ledgerStates = []ledger.State{ledger.InProgress, ledger.Done, ledger.Rejected, ledger.Skipped, ledger.Duplicate, ledger.Failed}

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

// filesInState ignores --since: "which files failed?" has no time horizon.
func filesInState(recs []ledger.Record, state ledger.State, max int, format string, stdout io.Writer) error {
	mine := slices.DeleteFunc(recs, func(r ledger.Record) bool { return r.State != state })
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
		rows = append(rows, []string{render.When(r.StartedAt), fmt.Sprint(r.Key.Generation), "gs://" + r.Key.Bucket + "/" + r.Key.Object, render.Clip(r.Reason, 120)})
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

// watch runs report every interval until ctx ends (Ctrl-C); count > 0 stops
// after that many reports (tests).
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
