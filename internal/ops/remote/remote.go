// Package remote is the client side of the ops commands against a running
// `alpipe serve`. The server's embedded engines are single-process, so the
// commands read its ledger and its status over HTTP, write objects through
// its fake Cloud Storage and deliver finalize events to its IngestCSV, the
// way Eventarc does.
package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/local"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/ops"
)

// Server is a running local server, by its base URL.
type Server struct {
	URL string // e.g. http://127.0.0.1:8080
}

var (
	_ ops.LedgerReader = Server{}
	_ ops.Ingester     = Server{}
)

// Get reads one ledger record; a generation the ledger has never seen is
// (zero, false, nil).
func (s Server) Get(ctx context.Context, key ledger.Key) (ledger.Record, bool, error) {
	q := url.Values{"bucket": {key.Bucket}, "object": {key.Object}, "generation": {strconv.FormatInt(key.Generation, 10)}}
	var rec ledger.Record
	status, err := s.getJSON(ctx, local.AdminPrefix+"ledger?"+q.Encode(), &rec)
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
	return local.Notify(ctx, s.URL, obj)
}

// Storage is the server's fake Cloud Storage; call the func when done.
func (s Server) Storage(ctx context.Context) (*objects.GCS, func(), error) {
	return local.Storage(ctx, s.URL)
}

// Status fetches the status report; since and files 0 mean the defaults.
func (s Server) Status(ctx context.Context, since time.Duration, files int) (ops.Report, error) {
	q := url.Values{}
	if since > 0 {
		q.Set("since", since.String())
	}
	if files > 0 {
		q.Set("files", strconv.Itoa(files))
	}
	var rep ops.Report
	status, err := s.getJSON(ctx, ops.StatusPath+"?"+q.Encode(), &rep)
	if status == http.StatusNotFound {
		return rep, fmt.Errorf("the server at %s has no %s endpoint: is it an older alpipe serve?", s.URL, ops.StatusPath)
	}
	return rep, err
}

func (s Server) getJSON(ctx context.Context, path string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(s.URL, "/")+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("is `alpipe serve` running at %s? %w", s.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, fmt.Errorf("GET %s: HTTP %d: %s", req.URL.Path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %w", req.URL.Path, err)
	}
	return resp.StatusCode, nil
}
