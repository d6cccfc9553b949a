package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	_ "time/tzdata" // --zone must work on machines without a zoneinfo database

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/reconcile"
	"github.com/alpinashop/alpipe/internal/warehouse/remote"
	"github.com/alpinashop/alpipe/internal/window"
)

// runReconcile compares the real-time view with the batch order lines for
// one date:
//
//	alpipe reconcile --date YYYY-MM-DD [--aggregation NAME] [--zone UTC] [--format text|json] [--server URL]
//
// lineas_pedido has a date and no time of day, so the honest comparison is
// per day and country: the batch totals of fecha D against the sum of the
// real-time windows starting on D (in --zone). Every hour of the day is
// listed with its real-time value and the too-late drops and invalid
// messages placed in it; a dropped order explains the batch figures of its
// own lines. A country whose difference the drops do not explain exactly
// makes the command exit non-zero. The named reads go through the
// server's warehouse route (localapi.WarehousePath); see package reconcile.
func runReconcile(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	date := fs.String("date", "", "fecha to reconcile, YYYY-MM-DD (required): judged per day and country, since lineas_pedido has no time of day; hours are listed as detail")
	agg := fs.String("aggregation", window.Defaults().Name, "aggregation whose panes the view ventas_hora_pais shows")
	zone := fs.String("zone", "UTC", "time zone of the day on the real-time side (IANA name, e.g. Europe/Madrid)")
	format := fs.String("format", "text", "output: text or json")
	server := serverFlag(fs)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *date == "" {
		return errors.New("reconcile: want --date YYYY-MM-DD and no other arguments")
	}
	if err := checkFormat("reconcile", *format, "text", "json"); err != nil {
		return err
	}
	loc, err := time.LoadLocation(*zone)
	if err != nil {
		return fmt.Errorf("reconcile: --zone: %w", err)
	}
	// The named reads go to the server's warehouse route (remote's wire),
	// once the server answers at all.
	if err := (client.Server{URL: *server}).Ping(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	wh, err := remote.New(strings.TrimRight(*server, "/")+localapi.WarehousePath, nil)
	if err != nil {
		return fmt.Errorf("reconcile: --server: %w", err)
	}
	rep, err := reconcile.Run(ctx, wh, reconcile.Request{Date: *date, Aggregation: *agg, Location: loc})
	if err != nil {
		return err
	}
	if err := report(stdout, *format, rep); err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("reconcile %s: unexplained differences in %s", *date, strings.Join(rep.Unexplained, ", "))
	}
	return nil
}
