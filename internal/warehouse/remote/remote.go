// Package remote is a pure-Go warehouse adapter that forwards every call
// over HTTP to the warehouse of another process, and the http.Handler that
// serves those calls there.
//
// It exists because the embedded warehouse is single-process: `alpipe serve`
// holds the DuckDB file, and cmd/server (built without cgo) cannot link
// DuckDB at all. With WAREHOUSE=remote, a laptop runs
// `FUNCTION_TARGET=IngestCSV go run ./cmd/server` against the warehouse of a
// running `alpipe serve`, which mounts Handler under /_local/warehouse/.
//
// # Wire format
//
// All paths are relative to the mount point (Handler expects the prefix
// stripped, see http.StripPrefix):
//
//	POST load?table=T&id=ID     body: NDJSON rows, then an end line     -> {"rows":N,"already_loaded":B}
//	POST append?table=T         body: NDJSON [id, cells...], end line  -> 204
//	POST refresh-daily          {"aggregate":A,"dates":[days...]}      -> 204
//	POST query                  {"sql":S}                              -> {"columns":[...],"rows":[[...]]}
//	POST read                   {"name":N,"params":[...]}              -> as query (see read.go)
//
// A row is a JSON array of cells in the column order of the table's schema
// (warehouse.Lookup), decoded by that schema, so every value is exact:
//
//	NULL       null
//	STRING     a JSON string; {"base64":"..."} when it is not valid UTF-8,
//	           so the backend, not the wire, decides what such a string means
//	INT64      a JSON integer (read back exactly, never through a float)
//	NUMERIC    the decimal string of numeric.Dec ("179.8")
//	DATE       days since 1970-01-01, an integer (every int32 round-trips)
//	TIMESTAMP  microseconds since the epoch, an integer: the precision both
//	           warehouses keep, floored as their adapters floor it
//
// A load asks "Expect: 100-continue" and sends its rows only once the
// backend starts reading them, so a load whose ID has committed reads
// nothing from its source. Its body ends with the line {"end":N}, N being
// the number of rows sent. The handler's row source reports success only after that line
// and the end of the body: a load whose source fails midway aborts the
// request, and a body cut short for any reason can never commit.
//
// Load and append requests carry the schema's fingerprint in the
// Alpipe-Schema header; a server built with another schema refuses them
// rather than misreading the columns.
package remote

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Backend is the warehouse a Handler serves; the DuckDB adapter is one, and
// so is Client.
type Backend = warehouse.Warehouse

// Request paths, relative to the mount point.
const (
	pathLoad    = "load"
	pathAppend  = "append"
	pathRefresh = "refresh-daily"
	pathQuery   = "query"
	pathRead    = "read"
)

const (
	schemaHeader = "Alpipe-Schema"
	ndjsonType   = "application/x-ndjson"
	jsonType     = "application/json"
)

// fingerprint identifies a table's schema: its columns' names, types and
// modes, in order.
func fingerprint(t warehouse.Table) string {
	h := sha256.New()
	h.Write([]byte(t.Name))
	for _, f := range t.Schema {
		h.Write([]byte{0})
		h.Write([]byte(f.Name + " " + string(f.Type) + " " + f.Mode))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
