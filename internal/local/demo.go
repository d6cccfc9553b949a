package local

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/aggregation"
	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/stream"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// DemoFiles plays the file-drop story against a running server.
func (s *Server) DemoFiles(ctx context.Context, w io.Writer, testdata string) error {
	var files [][2]string // the file, and the object it lands as: its path under testdata
	err := filepath.WalkDir(filepath.Join(testdata, "exportaciones"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".csv") {
			return err
		}
		rel, err := filepath.Rel(testdata, p)
		files = append(files, [2]string{p, filepath.ToSlash(rel)})
		return err
	})
	if err != nil {
		return fmt.Errorf("demo files in %s/exportaciones: %w", testdata, err)
	}
	slices.SortFunc(files, func(a, b [2]string) int { return strings.Compare(a[1], b[1]) })
	if len(files) == 0 {
		return fmt.Errorf("no CSV files under %s/exportaciones: run the demo from the repository root or pass --testdata", testdata)
	}
	srv := client.Server{URL: s.URL}
	fmt.Fprintln(w, "== File drops ==")
	var recs []ledger.Record
	for _, f := range files {
		rec, err := srv.Drop(ctx, f[1], f[0])
		if err != nil {
			return err
		}
		recs = append(recs, rec)
		PrintRecord(w, rec)
	}
	if len(recs) > 0 {
		// Eventarc delivers at least once: show that a redelivery is a no-op.
		first := recs[0]
		attrs, err := s.App.Objects.Stat(ctx, localapi.LandingBucket, first.Key.Object)
		if err != nil {
			return err
		}
		again, err := srv.Ingest(ctx, attrs)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "redelivered %s: still %s, attempt %d, nothing loaded twice\n", first.Key, again.State, again.Attempt)
		// The ERP sometimes exports the same file twice under another name.
		copyName := strings.TrimSuffix(first.Key.Object, ".csv") + "-copia.csv"
		dup, err := srv.Drop(ctx, copyName, files[0][0])
		if err != nil {
			return err
		}
		PrintRecord(w, dup)
	}

	fmt.Fprintln(w, "\n== Quarantined rows ==")
	for _, rec := range recs {
		if rec.Quarantine == "" {
			continue
		}
		if err := s.printQuarantine(ctx, w, rec.Quarantine); err != nil {
			return err
		}
	}
	return s.printQueries(ctx, w, []titledQuery{
		{"Loaded order lines (lineas_pedido)", warehouse.ListLineasPedido},
		{"Loaded reviews (opiniones)", warehouse.ListOpiniones},
		{"Daily aggregate (ventas_diarias_sku)", warehouse.ListVentasDiariasSKU},
	})
}

// PrintRecord's quarantine line is the last.
func PrintRecord(w io.Writer, rec ledger.Record) {
	fmt.Fprintf(w, "gs://%s/%s\n  generation: %d  status: %s", rec.Key.Bucket, rec.Key.Object, rec.Key.Generation, rec.State)
	if rec.Feed != "" {
		fmt.Fprintf(w, "  feed: %s", rec.Feed)
	}
	fmt.Fprintf(w, "\n  rows read/loaded/quarantined: %s/%s/%s\n",
		render.Thousands(rec.Counts.Read), render.Thousands(rec.Counts.Loaded), render.Thousands(rec.Counts.Quarantined))
	if rec.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", rec.Reason)
	}
	if rec.DuplicateOf != nil {
		fmt.Fprintf(w, "  duplicate of: %s\n", rec.DuplicateOf)
	}
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  quarantine: gs://%s/%s\n", localapi.QuarantineBucket, rec.Quarantine)
	}
}

func (s *Server) printQuarantine(ctx context.Context, w io.Writer, object string) error {
	r, err := s.App.Objects.Open(ctx, localapi.QuarantineBucket, object, 0)
	if err != nil {
		return fmt.Errorf("open quarantine %s: %w", object, err)
	}
	defer r.Close()
	fmt.Fprintf(w, "gs://%s/%s\n", localapi.QuarantineBucket, object)
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	for i := 0; ; i++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read quarantine %s: %w", object, err)
		}
		if i == 0 || len(rec) < 4 {
			continue // header
		}
		fmt.Fprintf(w, "  line %s  [%s] %s\n    %s\n", rec[0], rec[1], rec[2], strings.TrimRight(rec[3], "\r\n"))
	}
}

type titledQuery struct{ title, listing string }

func (s *Server) printQueries(ctx context.Context, w io.Writer, qs []titledQuery) error {
	for _, q := range qs {
		fmt.Fprintf(w, "\n== %s ==\n", q.title)
		res, types, err := warehouse.ReadListing(ctx, s.App.Warehouse, q.listing)
		if err != nil {
			return err
		}
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = string(t)
		}
		if err := render.Result(w, res, render.Kinds(res.Columns, names), "text"); err != nil {
			return err
		}
	}
	return nil
}

// DemoOrders plays an orders story (testdata/pedidos/historia.jsonl)
// against a virtual-clock server: each order pushed at its arrival time,
// each tick at its time.
func (s *Server) DemoOrders(ctx context.Context, w io.Writer, story string) error {
	if !s.Clock.Virtual() {
		return fmt.Errorf("the orders story needs a virtual-clock server")
	}
	srv := client.Server{URL: s.URL}
	steps, err := client.ReadStepsFile(story)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "\n== Orders in real time (processing time in UTC) ==")
	var ran []string // the aggregations the ticks ran, in configuration order
	for _, st := range steps {
		at := cmp.Or(st.Tick, st.Arrival)
		if !at.IsZero() {
			if _, err := srv.SetClock(ctx, at); err != nil {
				return err
			}
		}
		now := s.Clock.Now().Format("15:04:05")
		if !st.Tick.IsZero() {
			res, err := srv.Tick(ctx)
			if err != nil {
				return err
			}
			stream.WriteTick(w, res)
			for _, a := range res.Aggregations {
				if !slices.Contains(ran, a.Aggregation) {
					ran = append(ran, a.Aggregation)
				}
			}
			continue
		}
		res, err := srv.Push(ctx, st, at)
		if err != nil {
			return err
		}
		res.Aggregations = Headlined(res.Aggregations)
		fmt.Fprintln(w, now+" "+stream.OrderLine(res, st.EventTime))
		if st.Note != "" {
			fmt.Fprintf(w, "         ^ %s\n", st.Note)
		}
	}
	if err := s.printQueries(ctx, w, []titledQuery{
		{"Every pane (ventas_hora_pais_paneles)", warehouse.ListPanes},
		{"Dashboard view (ventas_hora_pais): current value per hour and country", warehouse.ListView},
	}); err != nil {
		return err
	}
	for _, name := range ran {
		if name == warehouse.VentasHoraPais {
			continue
		}
		if err := s.printView(ctx, w, name); err != nil {
			return err
		}
	}
	return s.printQueries(ctx, w, []titledQuery{
		{"Discarded orders (pedidos_descartados)", warehouse.ListDiscards},
	})
}

// Headlined puts ventas_hora_pais first among an order's outcomes, the
// others in configuration order (the stack stories read the lines so).
func Headlined(os []stream.Outcome) []stream.Outcome {
	i := slices.IndexFunc(os, func(o stream.Outcome) bool { return o.Aggregation == warehouse.VentasHoraPais })
	if i <= 0 {
		return os
	}
	return slices.Concat(os[i:i+1], os[:i], os[i+1:])
}

func (s *Server) printView(ctx context.Context, w io.Writer, name string) error {
	d, err := aggregation.Lookup(name)
	if err != nil {
		return err
	}
	listing, ok := warehouse.ViewListing(name)
	if !ok {
		return fmt.Errorf("print view: aggregation %q has no view listing", name)
	}
	windows := "hour"
	if d.WindowType == aggregation.Session {
		windows = "session, gap " + render.Short(d.Gap) + ","
	} else if d.WindowType == aggregation.Sliding {
		windows = fmt.Sprintf("sliding window (%s every %s)", render.Short(d.WindowSize), render.Short(d.Period))
	} else if d.WindowSize != time.Hour {
		windows = render.Short(d.WindowSize) + " window"
	}
	return s.printQueries(ctx, w, []titledQuery{
		{fmt.Sprintf("Dashboard view (%s): current value per %s and %s", d.View(), windows, d.KeyField), listing},
	})
}
