// Package localapi is the contract between `alpipe serve` and its clients
// (the CLI, the demo, the tests that drive a server): where the server
// listens by default, the paths of its local-only routes and of the
// functions it serves, the buckets of its fake Cloud Storage, and the
// request and answer forms of those routes, including the one wire form of
// a query's answer. Both sides import it, so a name cannot drift; it links
// neither the server nor DuckDB, so a client stays light.
package localapi

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// DefaultAddr is where serve listens and where client commands look.
const DefaultAddr = "127.0.0.1:8080"

// DefaultURL is DefaultAddr as a client reaches it.
const DefaultURL = "http://" + DefaultAddr

// Prefix is where the local-only routes live. They exist because the
// embedded engines are single-process: a second process cannot open the
// DuckDB or state files while serve holds them, so client commands ask the
// server instead.
const Prefix = "/_local/"

// The local-only routes.
const (
	// HealthPath answers GET with "ok".
	HealthPath = Prefix + "health"
	// QueryPath runs POST QueryRequest; the answer is NDJSON (see
	// QueryContentType).
	QueryPath = Prefix + "query"
	// LedgerPath answers GET with every ledger record, or with the one
	// LedgerQuery names (404 when the ledger has never seen it).
	LedgerPath = Prefix + "ledger"
	// ClockPath sets a virtual clock: POST ?now=RFC 3339, answered with
	// ClockAnswer.
	ClockPath = Prefix + "clock"
	// StatsPath answers GET with the ingest service's counters.
	StatsPath = Prefix + "stats"
	// StatusPath answers GET ?since=duration&files=n with the status
	// report.
	StatusPath = Prefix + "status"
	// ReplayPath replays an orders history (POST JSONL) inside the server.
	ReplayPath = Prefix + "replay"
)

// The functions the server serves, each at FunctionPath(name), as Cloud
// Run serves one at "/". The names are the functions' own (FUNCTION_TARGET):
// cmd/alpipe's TestFunctionRoutesMatchTheFunctions holds them equal to
// package functions', which does not link this client contract.
const (
	IngestCSV        = "IngestCSV"
	AggregateOrders  = "AggregateOrders"
	AdvanceWatermark = "AdvanceWatermark"
)

// FunctionPath is the path of a function on the local server.
func FunctionPath(name string) string { return "/" + name }

// FinalizedType is the Eventarc event IngestCSV takes: a new object
// generation.
const FinalizedType = "google.cloud.storage.object.v1.finalized"

// Topic is the topic the web application publishes orders on.
const Topic = "pedidos-nuevos"

// The buckets of the server's fake Cloud Storage, named as in production.
const (
	LandingBucket    = "alpinashop-catalogo"
	QuarantineBucket = "alpinashop-cuarentena"
	StagingBucket    = "alpinashop-staging"
)

// LedgerURL is the path and query of GET LedgerPath for the record of one
// generation.
func LedgerURL(k ledger.Key) string {
	q := url.Values{"bucket": {k.Bucket}, "object": {k.Object}, "generation": {strconv.FormatInt(k.Generation, 10)}}
	return LedgerPath + "?" + q.Encode()
}

// LedgerKey reads the generation a GET LedgerPath names; ok is false when it
// names none (the whole ledger is asked for).
func LedgerKey(q url.Values) (k ledger.Key, ok bool, err error) {
	if q.Get("object") == "" {
		return ledger.Key{}, false, nil
	}
	gen, err := strconv.ParseInt(q.Get("generation"), 10, 64)
	if err != nil {
		return ledger.Key{}, true, fmt.Errorf("generation: %w", err)
	}
	return ledger.Key{Bucket: q.Get("bucket"), Object: q.Get("object"), Generation: gen}, true, nil
}

// ClockURL is the path and query of POST ClockPath that sets the clock to t.
func ClockURL(t time.Time) string {
	return ClockPath + "?now=" + url.QueryEscape(t.UTC().Format(time.RFC3339Nano))
}

// ClockTime reads the time a POST ClockPath sets.
func ClockTime(q url.Values) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, q.Get("now"))
	if err != nil {
		return time.Time{}, fmt.Errorf("now: %w", err)
	}
	return t, nil
}

// ClockAnswer is the answer to POST ClockPath: the time the clock shows.
type ClockAnswer struct {
	Now time.Time `json:"now"`
}

// StatusURL is the path and query of GET StatusPath: since and files 0
// mean the server's defaults.
func StatusURL(since time.Duration, files int) string {
	q := url.Values{}
	if since > 0 {
		q.Set("since", since.String())
	}
	if files > 0 {
		q.Set("files", strconv.Itoa(files))
	}
	return StatusPath + "?" + q.Encode()
}
