package main

import (
	"fmt"
	"io"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/render"
)

// printRecord prints one file's outcome on a few lines, naming the
// quarantine file in the form `alpipe quarantine get` takes.
func printRecord(w io.Writer, rec ledger.Record) {
	fmt.Fprintf(w, "gs://%s/%s\n  generation: %d  status: %s", rec.Key.Bucket, rec.Key.Object, rec.Key.Generation, rec.State)
	if rec.Feed != "" {
		fmt.Fprintf(w, "  feed: %s", rec.Feed)
	}
	fmt.Fprintf(w, "\n  rows read/loaded/quarantined: %s/%s/%s\n", render.Thousands(rec.Counts.Read), render.Thousands(rec.Counts.Loaded), render.Thousands(rec.Counts.Quarantined))
	if rec.Reason != "" {
		fmt.Fprintf(w, "  reason: %s\n", rec.Reason)
	}
	if rec.DuplicateOf != nil {
		fmt.Fprintf(w, "  duplicate of: %s\n", rec.DuplicateOf)
	}
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  quarantine: gs://%s/%s\n  fetch it:   alpipe quarantine get %s\n", localapi.QuarantineBucket, rec.Quarantine, rec.Quarantine)
	}
}
