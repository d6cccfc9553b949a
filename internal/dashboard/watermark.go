package dashboard

import (
	"context"
	"time"

	"github.com/alpinashop/alpipe/internal/docstore"
	"github.com/alpinashop/alpipe/internal/stream"
)

// A *stream.Processor is a WatermarkReader: where the processor runs, the
// dashboard asks it (Source.Watermarks = the processor).
var _ WatermarkReader = (*stream.Processor)(nil)

// StoreWatermarks reads watermarks from the stream processor's state store
// for a process that has the store but no processor; the stream package
// knows where the watermark lives (stream.ReadWatermark).
type StoreWatermarks struct {
	Store docstore.Store
}

var _ WatermarkReader = StoreWatermarks{}

// Watermark returns the aggregation's W, or the zero time before the first
// tick that saw an accepted order. stream.ReadWatermark refuses a name that
// would address another document.
func (s StoreWatermarks) Watermark(ctx context.Context, aggregation string) (time.Time, error) {
	return stream.ReadWatermark(ctx, s.Store, aggregation)
}
