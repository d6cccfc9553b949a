package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/alpinashop/alpipe/internal/local"
)

func runPublish(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("publish", flag.ContinueOnError)
	server := serverFlag(fs)
	format := fs.String("format", "text", "output: text or json")
	project := fs.String("project", envOr("GOOGLE_CLOUD_PROJECT", "alpinashop-datos"), "project of the emulator topic")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("publish: want exactly one FILE.jsonl")
	}
	steps, err := local.ReadStepsFile(pos[0])
	if err != nil {
		return err
	}
	if os.Getenv("PUBSUB_EMULATOR_HOST") != "" {
		n, err := local.PublishEmulator(ctx, *project, steps)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "published %d orders to projects/%s/topics/%s on the emulator at %s\n", n, *project, local.Topic, os.Getenv("PUBSUB_EMULATOR_HOST"))
		return nil
	}
	enc := json.NewEncoder(stdout)
	for _, st := range steps {
		if !st.Tick.IsZero() {
			continue // ticks belong to stories; use `alpipe tick`
		}
		res, err := local.Push(ctx, *server, st, time.Now())
		if err != nil {
			return err
		}
		if *format == "json" {
			if err := enc.Encode(res.Result); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(stdout, local.ResultLine(res.Result, st.EventTime))
	}
	return nil
}

func runTick(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tick", flag.ContinueOnError)
	server := serverFlag(fs)
	format := fs.String("format", "text", "output: text or json")
	now := fs.String("now", "", "processing time to move a --virtual-clock server to first (RFC 3339)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *now != "" {
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			return fmt.Errorf("--now: %w", err)
		}
		if err := local.SetClock(ctx, *server, t); err != nil {
			return err
		}
	}
	res, err := local.Tick(ctx, *server)
	if err != nil {
		return err
	}
	if *format == "json" {
		return printJSON(stdout, res)
	}
	local.PrintTick(stdout, res)
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
