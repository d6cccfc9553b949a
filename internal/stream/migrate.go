package stream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// migrateDocsPerTx bounds the previous layout's documents one migration
// transaction moves (and deletes).
const migrateDocsPerTx = 300

// migrate moves the previous layout's state of aggregation a (cells,
// deltas, agenda: final since ensureControl fenced the previous binary)
// into layout 3's window documents, and creates the fold document with
// Folded = folded. Each transaction merges whole cells (a cell with all
// its deltas) into their window and deletes what it moved, so a migration
// cut short resumes where it stopped; Migrating holds every fold and late
// correction until it is done.
func (p *Processor) migrate(ctx context.Context, a aggregation, folded int64, now time.Time) (foldDoc, error) {
	cells, err := p.store.List(ctx, a.paths.windows)
	if err != nil {
		return foldDoc{}, fmt.Errorf("list %s: %w", a.paths.windows, err)
	}
	deltas, err := p.store.List(ctx, a.paths.deltas)
	if err != nil {
		return foldDoc{}, fmt.Errorf("list %s: %w", a.paths.deltas, err)
	}
	agendas, err := p.store.List(ctx, a.paths.agenda)
	if err != nil {
		return foldDoc{}, fmt.Errorf("list %s: %w", a.paths.agenda, err)
	}
	type oldCell struct {
		wk    window.WindowKey
		paths []string
		cell  cellDoc
		parts []window.Shard
	}
	byCell := map[window.WindowKey]*oldCell{}
	get := func(wk window.WindowKey) *oldCell {
		c := byCell[wk]
		if c == nil {
			c = &oldCell{wk: wk}
			byCell[wk] = c
		}
		return c
	}
	for _, d := range cells {
		var cd cellDoc
		if err := decodeDoc(d, &cd); err != nil {
			return foldDoc{}, fmt.Errorf("migrate: %w", err)
		}
		wk := window.WindowKey{Window: window.Window{Start: cd.WindowStart.UTC(), End: cd.WindowEnd.UTC()}, Key: cd.Key}
		c := get(wk)
		c.cell, c.paths = cd, append(c.paths, d.Path)
	}
	for _, d := range deltas {
		var dd deltaDoc
		if err := decodeDoc(d, &dd); err != nil {
			return foldDoc{}, fmt.Errorf("migrate: %w", err)
		}
		c := get(dd.windowKey())
		c.paths, c.parts = append(c.paths, d.Path), append(c.parts, dd.Part)
	}
	onTimeDone := map[time.Time]bool{}
	var agendaPaths []string
	for _, d := range agendas {
		var ag agendaDoc
		if err := decodeDoc(d, &ag); err != nil {
			return foldDoc{}, fmt.Errorf("migrate: %w", err)
		}
		onTimeDone[ag.WindowStart.UTC()] = ag.OnTimeDone
		agendaPaths = append(agendaPaths, d.Path)
	}
	order := slices.SortedFunc(maps.Keys(byCell), func(x, y window.WindowKey) int {
		if c := x.Window.Start.Compare(y.Window.Start); c != 0 {
			return c
		}
		if x.Key < y.Key {
			return -1
		}
		if x.Key > y.Key {
			return 1
		}
		return 0
	})
	var fd foldDoc
	step := func(batch []*oldCell, deletes []string, last bool) error {
		return p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
			fd = foldDoc{}
			docs, err := tx.Get(a.paths.foldPath())
			if err != nil {
				return err
			}
			if err := decodeDoc(docs[0], &fd); err != nil {
				return err
			}
			if docs[0].Exists && !fd.Migrating {
				return nil // another tick finished it
			}
			if !docs[0].Exists {
				fd = foldDoc{Folded: folded, Migrating: true, Windows: map[string]windowEntry{}}
			}
			if fd.Windows == nil {
				fd.Windows = map[string]windowEntry{}
			}
			wins := map[string]*windowState{}
			var ids []string
			for _, c := range batch {
				id := windowID(c.wk.Window.Start)
				if wins[id] != nil {
					continue
				}
				e, ok := fd.Windows[id]
				if !ok {
					e = windowEntry{Start: c.wk.Window.Start, End: c.wk.Window.End, Parts: 1}
				}
				e.Due, e.OnTimeDone = now, onTimeDone[c.wk.Window.Start]
				wins[id] = &windowState{entry: e}
				ids = append(ids, id)
			}
			bad, err := readWindows(tx, a, inOrder(wins))
			if err != nil {
				return err
			}
			for _, err := range bad {
				return err
			}
			for _, c := range batch {
				ws := wins[windowID(c.wk.Window.Start)]
				sum, err := fold(c.cell.State, append([]window.Shard{c.cell.Folded}, c.parts...)...)
				if err != nil {
					return unreadable(fmt.Errorf("migrate %s: %w", cellID(c.wk), err))
				}
				ws.keys[c.wk.Key] = keyState{State: c.cell.State, Sum: sum}
				// The previous layout folded the deltas' newest event and
				// acceptance times into W only when its tick listed them:
				// the next advance observes them (Unseen, kept across the
				// steps of a migration cut short), or W would move as if
				// no order had come since (the idle rule).
				fd.UnseenEvent, fd.UnseenAccepted = later(fd.UnseenEvent, sum.MaxEventTime), later(fd.UnseenAccepted, sum.LastAccepted)
				for _, pp := range c.paths {
					if err := tx.Delete(pp); err != nil {
						return err
					}
				}
			}
			for _, id := range ids {
				ws := wins[id]
				if err := writeWindow(tx, a, ws); err != nil {
					return err
				}
				fd.Windows[id] = ws.entry
			}
			for _, pp := range deletes {
				if err := tx.Delete(pp); err != nil {
					return err
				}
			}
			if last {
				fd.Migrating = false
			}
			return set(tx, a.paths.foldPath(), fd, time.Time{})
		})
	}
	var batch []*oldCell
	n := 0
	for _, wk := range order {
		c := byCell[wk]
		if len(batch) > 0 && n+len(c.paths) > migrateDocsPerTx {
			if err := step(batch, nil, false); err != nil {
				return foldDoc{}, fmt.Errorf("migrate %s: %w", a.spec.Name, err)
			}
			batch, n = nil, 0
		}
		batch, n = append(batch, c), n+len(c.paths)
	}
	if err := step(batch, agendaPaths, true); err != nil {
		if errors.Is(err, ErrUnreadableState) {
			return foldDoc{}, err
		}
		return foldDoc{}, fmt.Errorf("migrate %s: %w", a.spec.Name, err)
	}
	return fd, nil
}
