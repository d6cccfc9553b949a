package ingest

import (
	"context"
	"io"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

// Objects reads landed files (Open wraps objects.ErrNotFound for a gone
// generation) and writes quarantine files.
type Objects interface {
	Open(ctx context.Context, bucket, name string, generation int64) (io.ReadCloser, error)
	Create(ctx context.Context, bucket, name, contentType string, metadata map[string]string) objects.Writer
}

// Ledger records which object generations were handled, with a lease so
// that exactly one attempt works on a generation at a time.
type Ledger interface {
	Claim(ctx context.Context, key ledger.Key, md5, owner string, now time.Time) (ledger.Claim, error)
	Finish(ctx context.Context, rec ledger.Record, now time.Time) error
}

// Locker serialises work that must not overlap across instances. Lock takes
// the named lease for owner until now+ttl and reports false while another
// owner holds it; Unlock releases it if owner still holds it.
type Locker interface {
	Lock(ctx context.Context, name, owner string, now time.Time, ttl time.Duration) (bool, error)
	Unlock(ctx context.Context, name, owner string) error
}

// Warehouse receives validated rows: Load is atomic and idempotent per ID;
// RefreshDaily replaces a daily aggregate's dates from the rows loaded.
type Warehouse interface {
	Load(ctx context.Context, req warehouse.Load) (warehouse.LoadResult, error)
	RefreshDaily(ctx context.Context, aggregate string, dates []int32) error
}
