// Package localapi is the contract between `alpipe serve` and its clients
// (the CLI, the demo, the tests that drive a server): where the server
// listens by default, the paths of its local-only routes and of the
// functions it serves, the buckets of its fake Cloud Storage, and the
// request and answer forms of those routes, including the one wire form of
// a query's answer. Both sides import it, so a name cannot drift; it links
// neither the server nor DuckDB, so a client stays light.
package localapi

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
// Run serves one at "/". The names are the functions' own (FUNCTION_TARGET).
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
