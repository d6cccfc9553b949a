package client

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/status"
)

// The ops commands (backfill, requeue) run against a server through these.
var (
	_ reingest.LedgerReader = Server{}
	_ reingest.Ingester     = Server{}
)

// Get reads one ledger record; a generation the ledger has never seen is
// (zero, false, nil).
func (s Server) Get(ctx context.Context, key ledger.Key) (ledger.Record, bool, error) {
	var rec ledger.Record
	code, err := s.getJSON(ctx, localapi.LedgerURL(key), &rec)
	if code == http.StatusNotFound {
		return ledger.Record{}, false, nil
	}
	if err != nil {
		return ledger.Record{}, false, fmt.Errorf("ledger record %s: %w", key, err)
	}
	return rec, true, nil
}

// Status fetches the status report; since and files 0 mean the defaults.
func (s Server) Status(ctx context.Context, since time.Duration, files int) (status.Report, error) {
	var rep status.Report
	code, err := s.getJSON(ctx, localapi.StatusURL(since, files), &rep)
	if code == http.StatusNotFound {
		return rep, fmt.Errorf("the server at %s has no %s endpoint: is it an older alpipe serve?", s.URL, localapi.StatusPath)
	}
	return rep, err
}
