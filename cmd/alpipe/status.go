package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/status"
)

// runStatus answers the morning questions: did last night's files load, how
// many rows were rejected and why, and is the real-time view keeping up.
// With an OBJECT it prints that object's ledger history instead.
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
		var recs []ledger.Record
		if *cloud {
			app, err := cloudApp(ctx, "status --cloud", functions.IngestCSVName)
			if err != nil {
				return err
			}
			defer app.Close()
			if recs, err = app.Ledger.List(ctx); err != nil {
				return fmt.Errorf("status: %w", err)
			}
		} else if recs, err = c.srv.Ledger(ctx); err != nil {
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
	if format == "json" {
		return render.JSON(stdout, rep)
	}
	return status.WriteText(stdout, rep)
}

// objectHistory prints every ledger record of one landing object (each
// generation, oldest first), so that "what happened to this file" needs no
// SQL. A gs://BUCKET/ prefix is accepted and stripped.
func objectHistory(ctx context.Context, srv client.Server, arg, format string, stdout io.Writer) error {
	bucket, name, gs, err := reingest.ParseGS(arg)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	recs, err := srv.Ledger(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	var mine []ledger.Record
	for _, r := range recs {
		if r.Key.Object == name && (!gs || r.Key.Bucket == bucket) {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return fmt.Errorf("status: the ledger has no record of %q (alpipe status lists recent files)", arg)
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Key.Generation < mine[j].Key.Generation })
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

// withoutFlag drops --name and -name (with "=value" or the next argument as
// its value) from args, so that --watch can re-run the same command.
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
