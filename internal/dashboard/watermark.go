package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/window"
)

// StoreWatermarks reads watermarks where the stream processor keeps them:
// the document aggregations/<agg>/control/watermark of its state store
// (layout in package stream's documentation), a window.WatermarkState.
// It only reads, in a transaction of one Get, so it never contends with a
// tick for longer than that read.
type StoreWatermarks struct {
	Store docstore.Store
}

var _ WatermarkReader = StoreWatermarks{}

// Watermark returns the aggregation's W, or the zero time before the first
// tick that saw an accepted order.
func (s StoreWatermarks) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	if !aggregationName.MatchString(aggregation) {
		return time.Time{}, fmt.Errorf("aggregation name %q: want letters, digits and '_'", aggregation)
	}
	path := "aggregations/" + aggregation + "/control/watermark"
	var doc docstore.Doc
	err := s.Store.RunTx(ctx, func(_ context.Context, tx docstore.Tx) error {
		docs, err := tx.Get(path)
		if err != nil {
			return err
		}
		doc = docs[0]
		return nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", path, err)
	}
	if !doc.Exists {
		return time.Time{}, nil
	}
	var state window.WatermarkState
	if err := json.Unmarshal(doc.Data, &state); err != nil {
		return time.Time{}, fmt.Errorf("decode %s: %w", path, err)
	}
	return state.Watermark.UTC(), nil
}
