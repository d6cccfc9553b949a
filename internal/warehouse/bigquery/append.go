package bigquery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/bigquery"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// appendBatch is the number of rows per insertAll request: BigQuery
// recommends about 500 rows per request; panes and dead letters are far
// below its 10 MB request limit at that count.
const appendBatch = 500

// Append streams rows into table with tabledata.insertAll, each row with
// insertId = Row.ID, or a hash of it when Row.ID is longer than BigQuery's
// 128 characters (see insertID).
//
// Why insertAll rather than the Storage Write API: the rows are the panes of
// the windowed aggregation and the dead letters, a few per minute, small and
// rare.
//   - Cost: insertAll is billed per 200 MB ingested (negligible at this
//     volume); the Write API is cheaper per byte, which only matters at high
//     volume.
//   - Dedup: insertId deduplication is best effort (about a minute), while a
//     committed Write API stream with offsets is exactly once, but only
//     within one stream whose name and offset the caller must persist across
//     retries and instances: more state for rows that are already safe to
//     see twice. A pane is identified by (aggregation, window, key,
//     pane_index), and the dashboard view keeps one row per identity; a
//     duplicated dead letter is harmless for an audit table.
//   - Quota: streaming does not count against the 1,500 table
//     modifications per day (load jobs would, one per pane), and rows are
//     queryable at once.
//   - Simplicity: one REST call retried by the library on 5xx with back-off
//     (safe because of insertId), no gRPC stream or protobuf descriptors.
//
// A row rejected by BigQuery fails the call with an error naming its ID;
// the other rows of that request are then not inserted either (BigQuery
// reports them as "stopped"), so the caller can retry the whole call.
func (w *Warehouse) Append(ctx context.Context, table string, rows []warehouse.Row) error {
	t, err := w.table(table)
	if err != nil {
		return fmt.Errorf("append to %s: %w", table, err)
	}
	if len(rows) == 0 {
		return nil
	}
	// Every row is checked before the first request, so a bad row cannot
	// leave the call half done.
	savers := make([]bigquery.ValueSaver, len(rows))
	for i, r := range rows {
		s, err := newRowSaver(t, r)
		if err != nil {
			return fmt.Errorf("append to %s: %w", table, err)
		}
		savers[i] = s
	}
	ins := w.dataset.Table(t.Name).Inserter()
	for start := 0; start < len(savers); start += appendBatch {
		if err := ins.Put(ctx, savers[start:min(start+appendBatch, len(savers))]); err != nil {
			return fmt.Errorf("append to %s: %w", table, describePutError(err, rows[start:]))
		}
	}
	return nil
}

// rowSaver hands one pre-encoded row to the Inserter. Each cell is raw JSON
// from the same encoder as the load files, so NUMERIC stays a decimal
// string and TIMESTAMP an RFC 3339 string on this path too.
type rowSaver struct {
	id    string
	cells map[string]bigquery.Value
}

func (s rowSaver) Save() (map[string]bigquery.Value, string, error) {
	return s.cells, s.id, nil
}

func newRowSaver(t warehouse.Table, r warehouse.Row) (rowSaver, error) {
	switch r.ID {
	case "":
		return rowSaver{}, errors.New("row without an ID: the ID is its insertId, needed to make a retry harmless")
	case bigquery.NoDedupeID:
		return rowSaver{}, fmt.Errorf("row ID %q is reserved by the client library (it disables deduplication)", r.ID)
	}
	if len(r.Values) != len(t.Schema) {
		return rowSaver{}, fmt.Errorf("row %s: %d values, table %s has %d columns", r.ID, len(r.Values), t.Name, len(t.Schema))
	}
	cells := make(map[string]bigquery.Value, len(t.Schema))
	for i, f := range t.Schema {
		v := r.Values[i]
		if v.Null {
			if f.Required() {
				return rowSaver{}, fmt.Errorf("row %s: column %s is REQUIRED but the value is NULL", r.ID, f.Name)
			}
			continue
		}
		b, err := appendValue(nil, f.Type, &v)
		if err != nil {
			return rowSaver{}, fmt.Errorf("row %s: column %s: %w", r.ID, f.Name, err)
		}
		cells[f.Name] = json.RawMessage(b)
	}
	return rowSaver{id: insertID(r.ID), cells: cells}, nil
}

// describePutError names the rejected rows by their Row.ID (not the
// insertId, which may be a hash), with BigQuery's reasons; rows is the
// batch the error is about, indexed as the request was.
func describePutError(err error, rows []warehouse.Row) error {
	var multi bigquery.PutMultiError
	if !errors.As(err, &multi) {
		return err
	}
	parts := make([]string, 0, len(multi))
	for _, re := range multi {
		reasons := make([]string, 0, len(re.Errors))
		for _, e := range re.Errors {
			var be *bigquery.Error
			if errors.As(e, &be) {
				reasons = append(reasons, be.Reason+": "+be.Message)
				continue
			}
			reasons = append(reasons, e.Error())
		}
		id := re.InsertID
		if re.RowIndex >= 0 && re.RowIndex < len(rows) {
			id = rows[re.RowIndex].ID
		}
		parts = append(parts, fmt.Sprintf("row %s: %s", id, strings.Join(reasons, "; ")))
	}
	return fmt.Errorf("%d rows rejected: %s: %w", len(multi), strings.Join(parts, ", "), err)
}
