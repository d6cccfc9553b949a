package local

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// DemoFiles lists the CSV files under dir/exportaciones, sorted, with the
// object name each lands as (its path relative to dir).
func DemoFiles(dir string) ([][2]string, error) {
	var out [][2]string
	root := filepath.Join(dir, "exportaciones")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".csv") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, [2]string{p, filepath.ToSlash(rel)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("demo files in %s: %w", root, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1] < out[j][1] })
	return out, nil
}

// DemoFiles plays the file-drop story against a running server and prints
// what a person would want to see: each file's outcome, every quarantined
// row with its reason, the loaded rows and the daily aggregate.
func (s *Server) DemoFiles(ctx context.Context, w io.Writer, testdata string) error {
	files, err := DemoFiles(testdata)
	if err != nil {
		return err
	}
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

// PrintRecord prints one file's outcome on a few lines; the quarantine
// file's line is the last.
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

// titledQuery is a listing (a named read of package warehouse) the demo
// prints under a title.
type titledQuery struct{ title, listing string }

// printQueries prints listings of the server's warehouse as render's "text"
// table, money with its scale.
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
