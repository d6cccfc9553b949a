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

// appendBatch is the rows per insertAll request, as BigQuery recommends.
const appendBatch = 500

// Append streams rows into table with tabledata.insertAll, insertId being
// Row.ID (hashed past 128 characters, see insertID).
//
// Why not the Storage Write API: the rows (panes, dead letters) are a few
// a minute. insertAll costs nothing noticeable at that volume, does not
// count against the 1,500 table modifications a day, and is one REST call
// the library retries safely thanks to insertId. Its dedup is best effort,
// where a committed Write API stream is exactly once only if its name and
// offset are kept across retries and instances: more state for rows safe
// to see twice (the dashboard view keeps one row per pane identity).
//
// A row BigQuery rejects fails the call naming its ID; the rest of that
// request is "stopped", not inserted, so the caller retries the whole call.
func (w *Warehouse) Append(ctx context.Context, table string, rows []warehouse.Row) error {
	t, err := warehouse.Lookup(table)
	if err != nil {
		return fmt.Errorf("append to %s: %w", table, err)
	}
	if len(rows) == 0 {
		return nil
	}
	// Every row is checked first, so a bad row cannot leave the call half done.
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

// rowSaver hands one row to the Inserter, each cell raw JSON from the load
// files' encoder, so NUMERIC stays a decimal string here too.
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

// describePutError names the rejected rows of the batch rows by Row.ID
// (the insertId may be a hash), with BigQuery's reasons.
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
