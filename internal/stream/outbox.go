package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// flushBatch bounds the rows of one sink append and the deletes of one
// transaction after a long sink outage left many rows behind.
const flushBatch = 200

// pending is an outbox document and its row.
type pending struct {
	path string
	e    entry
}

// writeEntry puts e into the outbox collection inside tx.
func (p *Processor) writeEntry(tx docstore.Tx, outbox string, e entry) (pending, error) {
	pe := pending{path: outbox + "/" + docstore.ID(e.RowID), e: e}
	return pe, set(tx, pe.path, e, time.Time{})
}

// flushOutbox appends every row waiting in an outbox collection, then
// deletes their documents. It returns the rows appended and those left.
func (p *Processor) flushOutbox(ctx context.Context, outbox string) (flushed, left int, err error) {
	docs, err := p.store.List(ctx, outbox)
	if err != nil {
		return 0, 0, fmt.Errorf("list %s: %w", outbox, err)
	}
	entries := make([]pending, 0, len(docs))
	for _, d := range docs {
		var e entry
		if err := json.Unmarshal(d.Data, &e); err != nil {
			// A document no build of this package wrote: keep it for a person.
			p.log.ErrorContext(ctx, "unreadable outbox document left in place", "path", d.Path, "error", err.Error())
			left++
			continue
		}
		entries = append(entries, pending{path: d.Path, e: e})
	}
	n, err := p.flush(ctx, entries)
	return n, left + len(entries) - n, err
}

// flush appends the rows of entries to the sink, table by table, then
// deletes the outbox documents of the tables that took them. A crash or
// failure between the two leaves the documents, and the next flush appends
// the same Row.IDs again, which the sink ignores. A table that fails does
// not hold back the other. It returns the rows appended and deleted.
func (p *Processor) flush(ctx context.Context, entries []pending) (int, error) {
	done := 0
	var errs []error
	for start := 0; start < len(entries); start += flushBatch {
		batch := entries[start:min(start+flushBatch, len(entries))]
		var tables []string
		rows := map[string][]warehouse.Row{}
		paths := map[string][]string{}
		for _, pe := range batch {
			r, err := p.rows.row(pe.e)
			if err != nil {
				p.log.ErrorContext(ctx, "outbox row cannot be rendered; left in place", "path", pe.path, "error", err.Error())
				continue
			}
			if _, ok := rows[pe.e.Table]; !ok {
				tables = append(tables, pe.e.Table)
			}
			rows[pe.e.Table] = append(rows[pe.e.Table], r)
			paths[pe.e.Table] = append(paths[pe.e.Table], pe.path)
		}
		var appended []string
		for _, t := range tables {
			if err := p.sink.Append(ctx, t, rows[t]); err != nil {
				errs = append(errs, fmt.Errorf("append %d rows to %s: %w", len(rows[t]), t, err))
				continue
			}
			appended = append(appended, paths[t]...)
		}
		if len(appended) == 0 {
			continue
		}
		err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
			for _, path := range appended {
				if err := tx.Delete(path); err != nil {
					return fmt.Errorf("delete %s: %w", path, err)
				}
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("clear %d outbox documents: %w", len(appended), err))
			continue
		}
		done += len(appended)
	}
	return done, errors.Join(errs...)
}
