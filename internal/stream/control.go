package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// ensureControl makes sure, once per process, that the control document
// names every configured aggregation. One configured later starts at the
// open generation: no record before it holds its elements.
func (p *Processor) ensureControl(ctx context.Context) error {
	p.controlMu.Lock()
	defer p.controlMu.Unlock()
	if p.controlReady {
		return nil
	}
	err := p.store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(controlPath)
		if err != nil {
			return err
		}
		ctl := controlDoc{Gen: 1, Aggs: map[string]aggControl{}}
		if err := decodeDoc(docs[0], &ctl); err != nil {
			return err
		}
		missing := !docs[0].Exists
		if ctl.Aggs == nil {
			ctl.Aggs = map[string]aggControl{}
		}
		for _, a := range p.aggs {
			if _, ok := ctl.Aggs[a.spec.Name]; !ok {
				missing = true
				ctl.Aggs[a.spec.Name] = aggControl{Since: ctl.Gen}
			}
		}
		if !missing {
			return nil
		}
		return set(tx, controlPath, ctl, time.Time{})
	})
	if err != nil {
		return fmt.Errorf("read the control document %s: %w", controlPath, err)
	}
	p.controlReady = true
	return nil
}
