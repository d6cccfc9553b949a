package main

import (
	"fmt"
	"io"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
)

// printRecord prints one file's outcome as the demo does, naming the
// quarantine file in the form `alpipe quarantine get` takes.
func printRecord(w io.Writer, rec ledger.Record) {
	local.PrintRecord(w, rec)
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  fetch it:   alpipe quarantine get %s\n", rec.Quarantine)
	}
}
