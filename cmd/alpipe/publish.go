package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
)

func runPublish(ctx context.Context, c *cmdline, stdout io.Writer) error {
	project := c.String("project", cliEnv().Project, "`PROJECT` of the emulator topic")
	if err := c.parse(); err != nil {
		return err
	}
	pos := c.pos
	if err := checkFile(pos[0]); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	steps, err := client.ReadStepsFile(pos[0])
	if err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return fmt.Errorf("publish: %s is not JSONL (one JSON order per line, as testdata/pedidos/historia.jsonl); a CSV export goes through alpipe drop: %w", pos[0], err)
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
			results = append(results, res.Result)
			continue
		}
		fmt.Fprintln(stdout, stream.OrderLine(res.Result, st.EventTime))
	}
	if c.format == "json" {
		return render.JSON(stdout, results) // nil is [] there
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

// parseTime reads an RFC 3339 time, saying the expected form when the user
// wrote a clock time or a date.
func parseTime(what, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want an RFC 3339 time with date and zone, e.g. 2026-03-14T18:30:00Z", what, s)
	}
	return t, nil
}
