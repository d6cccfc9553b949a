package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"
	_ "time/tzdata" // --zone must work on machines without a zoneinfo database

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/reconcile"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/replay"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
	"github.com/alpinashop/alpipe/internal/window"
)

func runReconcile(ctx context.Context, c *cmdline, stdout io.Writer) error {
	date := c.String("date", "", "fecha to reconcile, `YYYY-MM-DD` (required): judged per day and country, since lineas_pedido has no time of day; hours are listed as detail")
	agg := c.String("aggregation", window.Defaults().Name, "`NAME` of the aggregation whose panes the view ventas_hora_pais shows")
	zone := c.String("zone", "UTC", "time `ZONE` of the day on the real-time side (IANA name, e.g. Europe/Madrid)")
	if err := c.parse(); err != nil {
		return err
	}
	if *date == "" {
		return c.usagef("want --date YYYY-MM-DD")
	}
	loc, err := time.LoadLocation(*zone)
	if err != nil {
		return c.usagef("--zone: %w", err)
	}
	if err := c.srv.Ping(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	rep, err := reconcile.Run(ctx, servedReads{c.srv}, reconcile.Request{Date: *date, Aggregation: *agg, Location: loc})
	if err != nil {
		return err
	}
	if err := report(stdout, c.format, rep, rep.WriteText); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("reconcile %s: unexplained differences in %s", *date, strings.Join(rep.Unexplained, ", "))
	}
	return nil
}

// servedReads runs reconcile's reads through the query endpoint, since no
// second process may open serve's DuckDB: a statement with its values as
// literals, as the DuckDB adapter runs it, so the answer is the in-process
// one (an answer past a cap is an error, never fewer rows).
type servedReads struct{ srv client.Server }

var _ warehouse.Reader = servedReads{}

func (r servedReads) Read(ctx context.Context, s warehouse.Statement) (warehouse.Result, error) {
	return r.srv.Query(ctx, s.Inline())
}

// runReplay runs on the server, which holds the warehouse; see package
// replay.
func runReplay(ctx context.Context, c *cmdline, stdout io.Writer) error {
	fromTable := c.Bool("from-table", false, "replay lineas_pedido, one order per pedido_id at 12:00 UTC of its fecha, instead of a JSONL file")
	dates := c.String("dates", "", "only these UTC `DATES` of event time: YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD (default: all)")
	if err := c.parse(); err != nil {
		return err
	}
	pos := c.pos
	if *fromTable == (len(pos) == 1) || len(pos) > 1 {
		return c.usagef("want either FILE.jsonl (orders, as for publish) or --from-table")
	}
	if _, err := replay.ParseDates(*dates); err != nil {
		return c.usagef("--%w", err)
	}
	q := url.Values{}
	if *dates != "" {
		q.Set("dates", *dates)
	}
	var body io.Reader
	if *fromTable {
		q.Set("source", replay.SourceTable)
	} else {
		f, err := os.Open(pos[0])
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		defer f.Close()
		body = f // streamed: the file is never held in memory
	}
	if err := c.srv.Ping(ctx); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	rep, err := c.srv.Replay(ctx, q, body)
	if err != nil {
		return err // Replay's errors start "replay: "
	}
	if err := report(stdout, c.format, rep, rep.WriteText); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("replay: refused %d windows that already have other panes (listed above)", rep.Conflicts)
	}
	return nil
}

func runPublish(ctx context.Context, c *cmdline, stdout io.Writer) error {
	project := c.String("project", cliEnv().Project, "`PROJECT` of the emulator topic")
	if err := c.parse(); err != nil {
		return err
	}
	if err := checkFile(c.pos[0]); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	steps, err := client.ReadStepsFile(c.pos[0])
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("publish: %s is not JSONL (one JSON order per line, as testdata/pedidos/historia.jsonl); a CSV export goes through alpipe drop: %w", c.pos[0], err)
		}
		return fmt.Errorf("publish: %w", err)
	}
	if host := cliEnv().PubSubEmulator; host != "" {
		n, err := client.PublishEmulator(ctx, host, *project, steps)
		if err != nil {
			return fmt.Errorf("publish: is the Pub/Sub emulator running at PUBSUB_EMULATOR_HOST=%s? %w", host, err)
		}
		if c.format == "json" {
			return render.JSON(stdout, struct {
				Published int    `json:"published"`
				Topic     string `json:"topic"`
			}{n, "projects/" + *project + "/topics/" + localapi.Topic})
		}
		fmt.Fprintf(stdout, "published %d orders to projects/%s/topics/%s on the emulator at %s\n", n, *project, localapi.Topic, host)
		return nil
	}
	srv := c.srv
	if err := srv.Ping(ctx); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	var results []stream.Result
	for _, st := range steps {
		if !st.Tick.IsZero() {
			continue // ticks belong to stories; use `alpipe tick`
		}
		res, err := srv.Push(ctx, st, time.Now())
		if err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		if c.format == "json" {
			results = append(results, res)
		} else {
			fmt.Fprintln(stdout, stream.OrderLine(res, st.EventTime))
		}
	}
	if c.format == "json" {
		return render.JSON(stdout, results)
	}
	return nil
}

func runTick(ctx context.Context, c *cmdline, stdout io.Writer) error {
	now := c.String("now", "", "processing `TIME` to move a --virtual-clock server to first (RFC 3339, e.g. 2026-03-14T18:30:00Z)")
	if err := c.parse(); err != nil {
		return err
	}
	srv, format := c.srv, c.format
	if *now != "" {
		t, err := parseTime("tick: --now", *now)
		if err != nil {
			return err
		}
		got, err := srv.SetClock(ctx, t)
		if err != nil {
			return fmt.Errorf("tick: %w", err)
		}
		if got.After(t) {
			return fmt.Errorf("tick: --now %s is earlier than the server's clock, %s: processing time never goes back; give a later time", t.UTC().Format(time.RFC3339), got.UTC().Format(time.RFC3339))
		}
	}
	res, err := srv.Tick(ctx)
	if err != nil {
		return fmt.Errorf("tick: %w", err)
	}
	return report(stdout, format, res, func(w io.Writer) error { stream.WriteTick(w, res); return nil })
}

func parseTime(what, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time with date and zone, e.g. 2026-03-14T18:30:00Z", what, s)
	}
	return t, nil
}
