package objects

import (
	"context"
	"fmt"

	"cloud.google.com/go/storage"
)

// NewClient builds the production client, which talks to
// STORAGE_EMULATOR_HOST without credentials when it is set. JSON reads,
// because XML reads use /<bucket>/<object> paths a shared local server
// cannot route.
func NewClient(ctx context.Context) (*storage.Client, error) {
	c, err := storage.NewClient(ctx, storage.WithJSONReads())
	if err != nil {
		return nil, fmt.Errorf("storage client: %w", err)
	}
	return c, nil
}
