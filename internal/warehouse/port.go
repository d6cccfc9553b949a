package warehouse

import "context"

// Warehouse is the analytics warehouse port: the one contract that every
// backend (duckdb embedded, bigquery in production) implements and that warehousetest checks. Consumers that
// need less declare their own smaller interface (ingest.Warehouse: Load and
// RefreshDaily; the stream's Append) or take one of the parts below.
//
// The contract, per method (BigQuery's limits are the binding ones, so the
// embedded backend must not allow what production refuses):
//
// Load appends the rows of one source (a file generation) to a table:
//   - Atomic: all rows become visible together, or none (a source that
//     fails midway, an invalid row, a refused request append nothing).
//   - Exactly once per Load.ID: once an ID has committed (even with no
//     rows), every later Load of it appends nothing, reports AlreadyLoaded
//     and does not read Rows. A failed Load does not use up its ID: a retry
//     with the same ID may commit. Of concurrent Loads of one ID, exactly
//     one appends; the others report AlreadyLoaded.
//   - Load.ID: letters, digits, '_' and '-', 1 to 900 bytes. Rows come in
//     the column order of the table's schema (Lookup); a row of the wrong
//     width or a NULL in a REQUIRED column fails the Load.
//
// RefreshDaily recomputes an Aggregate for the given dates from its source
// table:
//   - Each given date's rows are replaced by the ones computed from the
//     source rows of that date, under the newest-generation rule (see
//     Aggregate); every other date is left untouched.
//   - Idempotent: refreshing a date again with no new source rows gives the
//     same rows. Dates may repeat and come in any order; none is a no-op.
//   - A group whose sum its column cannot hold (NUMERIC's
//     ±99999999999999999999999999999.999999999, INT64) is left out of its
//     date and every other group is refreshed; when nothing else failed,
//     the call returns a *OverflowError naming each such sum (date, keys,
//     column, exact sum). It is a report, not a failure: retrying gives the
//     same answer until the source rows change.
//   - An unknown aggregate fails. BigQuery's DAY partitions hold only
//     1960-01-01..2159-12-31: its adapter fails a date outside that range
//     permanently (IsPermanent) before sending anything, and the data
//     contracts reject such rows before they are loaded.
//
// Append streams small rows (panes, dead letters) into a table:
//   - Idempotent per insert identity: a row whose Row.ID was appended
//     before to the same table is ignored (the same ID in another table is
//     another row). Row.ID is required and may be of any length (the
//     BigQuery adapter hashes one longer than BigQuery's 128-character
//     insertId). BigQuery deduplicates for about a minute only, so readers
//     that must not double count also deduplicate by identity (the
//     dashboard view does).
//   - A call that fails may have appended some of its rows: the caller
//     retries the whole call, which the identity makes harmless.
//
// Read runs one of the named reads of this package (Reader): the SQL it
// declares, with its typed parameters, answered as Query answers. Every
// read the product makes goes through it, so warehousetest runs each one
// against every adapter.
//
// Query (Querier, which every adapter implements beside the port) runs one
// read-only GoogleSQL/DuckDB SELECT that a person typed, for `alpipe query`
// alone: the port has no SQL method, so code given a Warehouse or a Reader
// cannot run SQL, and only setup.App.Querier hands the adapter out as one.
//   - Read-only: anything but a single SELECT (DML, DDL, scripts) is
//     refused before it can change the warehouse.
//   - Unqualified table names resolve to the analytics dataset.
//   - Values come back as text: NULL as "NULL", NUMERIC as the shortest
//     exact decimal ("179.8"), DATE as YYYY-MM-DD, TIMESTAMP as RFC 3339
//     in UTC.
//
// Errors: a failure no retry can fix (the warehouse refused the rows or the
// request) satisfies IsPermanent; any other error is transient.
type Warehouse interface {
	Loader
	// RefreshDaily rebuilds the given dates of a daily aggregate.
	RefreshDaily(ctx context.Context, aggregate string, dates []int32) error
	Appender
	Reader
}

// Loader appends a source's rows exactly once per Load.ID (see Warehouse).
type Loader interface {
	Load(ctx context.Context, req Load) (LoadResult, error)
}

// Appender streams rows, idempotent per (table, Row.ID) (see Warehouse).
type Appender interface {
	Append(ctx context.Context, table string, rows []Row) error
}

// Querier runs read-only SQL that a person typed against the warehouse,
// for `alpipe query` alone: product code reads through Reader's named
// reads. Unqualified table names resolve to the analytics dataset (see
// Warehouse).
type Querier interface {
	Query(ctx context.Context, sql string) (Result, error)
}
