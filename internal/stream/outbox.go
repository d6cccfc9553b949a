package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// flushBatch bounds the rows of one sink append and the deletes of one
// transaction after a long sink outage left many rows behind.
const flushBatch = 200

// pending is an outbox document and its rows.
type pending struct {
	path    string
	entries []entry
}

// outboxDoc is an outbox document of several rows; one row is written as
// an entry.
type outboxDoc struct {
	Rows []entry `json:"rows"`
}

func (p *Processor) writeEntry(tx docstore.Tx, outbox string, e entry) (pending, error) {
	pe := pending{path: outbox + "/" + docstore.ID(e.RowID), entries: []entry{e}}
	return pe, set(tx, pe.path, e, time.Time{})
}

// writeEntries names the document by the first row's ID, which is written
// once.
func (p *Processor) writeEntries(tx docstore.Tx, outbox string, es []entry) (pending, error) {
	if len(es) == 1 {
		return p.writeEntry(tx, outbox, es[0])
	}
	pe := pending{path: outbox + "/" + docstore.ID(es[0].RowID), entries: es}
	return pe, set(tx, pe.path, outboxDoc{Rows: es}, time.Time{})
}

func decodeOutbox(d docstore.Doc) ([]entry, error) {
	var v struct {
		entry
		Rows []entry `json:"rows"`
	}
	if err := json.Unmarshal(d.Data, &v); err != nil {
		return nil, err
	}
	if len(v.Rows) > 0 {
		return v.Rows, nil
	}
	return []entry{v.entry}, nil
}

// flushOutbox appends every row waiting in an outbox collection and
// returns the rows appended and those left.
func (p *Processor) flushOutbox(ctx context.Context, outbox string) (flushed, left int, err error) {
	docs, err := p.store.List(ctx, outbox)
	if err != nil {
		return 0, 0, fmt.Errorf("list %s: %w", outbox, err)
	}
	pes := make([]pending, 0, len(docs))
	rows := 0
	for _, d := range docs {
		es, err := decodeOutbox(d)
		if err != nil {
			// A document no build of this package wrote: keep it for a person.
			p.log.ErrorContext(ctx, "unreadable outbox document left in place", "path", d.Path, "error", err.Error())
			left++
			continue
		}
		pes = append(pes, pending{path: d.Path, entries: es})
		rows += len(es)
	}
	n, err := p.flush(ctx, pes)
	return n, left + rows - n, err
}

// flush appends the rows of pes to the sink, table by table, then deletes
// the documents all of whose rows were taken. A crash between the two
// leaves the documents for the next flush, whose Row.IDs the sink ignores.
// A table that fails does not hold back the others.
func (p *Processor) flush(ctx context.Context, pes []pending) (int, error) {
	done := 0
	var errs []error
	for start := 0; start < len(pes); {
		// A document's rows go in one batch, so that it is deleted only
		// once all of them are appended.
		end, n := start, 0
		for end < len(pes) && (end == start || n+len(pes[end].entries) <= flushBatch) {
			n += len(pes[end].entries)
			end++
		}
		batch := pes[start:end]
		start = end
		var tables []string
		rows := map[string][]warehouse.Row{}
		var docs []pending
		for _, pe := range batch {
			rs := make([]warehouse.Row, 0, len(pe.entries))
			for _, e := range pe.entries {
				r, err := p.rows.row(e)
				if err != nil {
					p.log.ErrorContext(ctx, "outbox row cannot be rendered; its document is left in place", "path", pe.path, "error", err.Error())
					rs = nil
					break
				}
				rs = append(rs, r)
			}
			if rs == nil {
				continue
			}
			for i, e := range pe.entries {
				if _, ok := rows[e.Table]; !ok {
					tables = append(tables, e.Table)
				}
				rows[e.Table] = append(rows[e.Table], rs[i])
			}
			docs = append(docs, pe)
		}
		failed := map[string]bool{}
		for _, t := range tables {
			if err := p.sink.Append(ctx, t, rows[t]); err != nil {
				errs = append(errs, fmt.Errorf("append %d rows to %s: %w", len(rows[t]), t, err))
				failed[t] = true
			}
		}
		var appended []string
		cleared := 0
		for _, pe := range docs {
			if !slices.ContainsFunc(pe.entries, func(e entry) bool { return failed[e.Table] }) {
				appended = append(appended, pe.path)
				cleared += len(pe.entries)
			}
		}
		if len(appended) == 0 {
			continue
		}
		err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error { return deleteAll(tx, appended) })
		if err != nil {
			errs = append(errs, fmt.Errorf("clear %d outbox documents: %w", len(appended), err))
			continue
		}
		done += cleared
	}
	return done, errors.Join(errs...)
}
