package reingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

type IngestService interface {
	Ingest(ctx context.Context, obj ingest.Object) (ledger.Record, error)
}

// DefaultBusyWait is how long Direct waits for another attempt (the
// deployed function on the same event) before reporting it busy.
const DefaultBusyWait = time.Minute

// Direct ingests in this process through the service IngestCSV runs, so a
// backfill takes exactly the path of a file drop.
type Direct struct {
	Service  IngestService
	BusyWait time.Duration // default DefaultBusyWait; the wait backs off up to 5 s
}

var _ Ingester = Direct{}

// Ingest handles obj as its finalize event would. While another attempt
// holds the generation it waits, as Eventarc's redelivery would.
func (d Direct) Ingest(ctx context.Context, obj objects.Attrs) (ledger.Record, error) {
	if d.Service == nil {
		return ledger.Record{}, errors.New("direct ingest: no service")
	}
	wait := cmp.Or(max(d.BusyWait, 0), DefaultBusyWait)
	o := ingest.Object{Bucket: obj.Bucket, Name: obj.Name, Generation: obj.Generation, MD5: obj.MD5, Size: obj.Size}
	deadline := time.Now().Add(wait)
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
		rec, err := d.Service.Ingest(ctx, o)
		if !errors.Is(err, ingest.ErrBusy) || time.Now().Add(delay).After(deadline) {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, fmt.Errorf("%w (gave up waiting: %w)", err, ctx.Err())
		case <-time.After(delay):
		}
	}
}
