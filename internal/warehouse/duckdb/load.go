package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Load appends req.Rows exactly once per req.ID: the ID's marker row
// commits in the same transaction as the rows. Concurrent Loads of one ID
// queue behind a lock, so the second finds the marker, not a conflict.
func (w *Warehouse) Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error) {
	if err := warehouse.CheckID(req.ID, warehouse.MaxLoadIDLen); err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %q: invalid ID: %w", req.ID, err)
	}
	t, err := warehouse.Lookup(req.Table)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, err)
	}
	unlock := w.loads.lock(req.ID)
	defer unlock()

	conn, err := w.db.Conn(ctx)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, err)
	}
	defer conn.Close()
	done, err := loaded(ctx, conn, req.ID)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, err)
	}
	if done {
		return warehouse.LoadResult{AlreadyLoaded: true}, nil
	}
	release, err := w.acquire(ctx)
	if err != nil {
		return warehouse.LoadResult{}, fmt.Errorf("load %s: %w", req.ID, err)
	}
	defer release()
	var n int64
	err = inTx(ctx, conn, func() error {
		var err error
		if n, err = w.spoolAndInsert(ctx, conn, t, req.Rows); err != nil {
			return err
		}
		_, err = conn.ExecContext(ctx, "INSERT INTO "+loadsTable+" VALUES (?, ?, ?, ?)",
			req.ID, t.Name, n, time.Now().UTC())
		return err
	})
	if err != nil {
		// Another handle on the database may have committed the ID meanwhile.
		if done, lerr := loaded(context.WithoutCancel(ctx), conn, req.ID); lerr == nil && done {
			return warehouse.LoadResult{AlreadyLoaded: true}, nil
		}
		return warehouse.LoadResult{}, fmt.Errorf("load %s into %s: %w", req.ID, t.Name, err)
	}
	return warehouse.LoadResult{Rows: n}, nil
}

func loaded(ctx context.Context, conn *sql.Conn, id string) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, "SELECT count(*) FROM "+loadsTable+" WHERE id = ?", id).Scan(&n)
	return n > 0, err
}

// inTx runs fn in one transaction of conn (not an sql.Tx, so that all run
// on conn, the spool's inserter too, takes part), committing on success.
func inTx(ctx context.Context, conn *sql.Conn, fn func() error) error {
	if _, err := conn.ExecContext(ctx, "BEGIN TRANSACTION"); err != nil {
		return err
	}
	if err := fn(); err != nil {
		// The rollback must run even when ctx is what failed fn.
		_, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return errors.Join(err, rerr)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return err
	}
	return nil
}
