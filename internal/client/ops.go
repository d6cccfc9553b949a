package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
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
	q := url.Values{"bucket": {key.Bucket}, "object": {key.Object}, "generation": {strconv.FormatInt(key.Generation, 10)}}
	var rec ledger.Record
	status, err := s.getJSON(ctx, AdminPrefix+"ledger?"+q.Encode(), &rec)
	if status == http.StatusNotFound {
		return ledger.Record{}, false, nil
	}
	if err != nil {
		return ledger.Record{}, false, fmt.Errorf("ledger record %s: %w", key, err)
	}
	return rec, true, nil
}

// Ingest delivers obj's finalize event to the server's IngestCSV and waits
// for its outcome, retrying while another attempt holds it.
func (s Server) Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error) {
	return s.Notify(ctx, obj)
}

// StatusPath is where the local server serves the status report.
const StatusPath = AdminPrefix + "status"

// Status fetches the status report; since and files 0 mean the defaults.
func (s Server) Status(ctx context.Context, since time.Duration, files int) (status.Report, error) {
	q := url.Values{}
	if since > 0 {
		q.Set("since", since.String())
	}
	if files > 0 {
		q.Set("files", strconv.Itoa(files))
	}
	var rep status.Report
	code, err := s.getJSON(ctx, StatusPath+"?"+q.Encode(), &rep)
	if code == http.StatusNotFound {
		return rep, fmt.Errorf("the server at %s has no %s endpoint: is it an older alpipe serve?", s.URL, StatusPath)
	}
	return rep, err
}
