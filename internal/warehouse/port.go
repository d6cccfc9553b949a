package warehouse

import "context"

// Warehouse is the analytics warehouse port, which every backend (duckdb
// embedded, bigquery in production) implements and warehousetest checks;
// consumers that need less declare a smaller interface. BigQuery's limits
// bind: the embedded backend must not allow what production refuses.
//
// Load appends the rows of one source (a file generation) to a table:
//   - Atomic: all rows become visible together, or none (a source that
//     fails midway, an invalid row, a refused request append nothing).
//   - Exactly once per Load.ID: once an ID has committed (even with no
//     rows), every later Load of it reports AlreadyLoaded without reading
//     Rows. A failed Load does not use up its ID. Of concurrent Loads of
//     one ID, exactly one appends.
//   - Load.ID: letters, digits, '_' and '-', 1 to 900 bytes. Rows come in
//     the column order of the table's schema (Lookup); a row of the wrong
//     width or a NULL in a REQUIRED column fails the Load.
//
// RefreshDaily recomputes an Aggregate for the given dates from its source
// table:
//   - Each given date's rows are replaced by the ones computed from its
//     source rows (newest-generation rule, see Aggregate); no other date
//     changes. Idempotent; dates may repeat, in any order; none is a no-op.
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
//   - Idempotent per (table, Row.ID): a row whose ID was appended before to
//     the same table is ignored. Row.ID is required, of any length.
//     BigQuery deduplicates for about a minute only, so readers that must
//     not double count also deduplicate by identity (the dashboard view).
//   - A call that fails may have appended some of its rows: the caller
//     retries the whole call, which the identity makes harmless.
//
// Read runs one of the named reads of this package (Reader), answered as
// Query answers; every read the product makes goes through it.
//
// Query (Querier, beside the port) runs one read-only SELECT a person
// typed, for `alpipe query` alone: code given a Warehouse or a Reader
// cannot run SQL.
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
	Load(ctx context.Context, req Load) (LoadResult, error)
	// RefreshDaily rebuilds the given dates of a daily aggregate.
	RefreshDaily(ctx context.Context, aggregate string, dates []int32) error
	Appender
	Reader
}

// Appender is the Append part of Warehouse.
type Appender interface {
	Append(ctx context.Context, table string, rows []Row) error
}

// Querier runs read-only SQL a person typed (see Warehouse).
type Querier interface {
	Query(ctx context.Context, sql string) (Result, error)
}
