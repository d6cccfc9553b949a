package objects

import (
	"context"
	"fmt"

	"cloud.google.com/go/storage"
)

// NewClient builds the production client. When STORAGE_EMULATOR_HOST is set
// (e.g. 127.0.0.1:8080 while the local CLI serves the fake) the library
// talks to it without credentials. JSON reads are used because the default
// XML reads address /<bucket>/<object> on the host, a path the fake only
// answers for its public host name and that a shared local server cannot
// route; JSON reads work on the fake and in production alike.
func NewClient(ctx context.Context) (*storage.Client, error) {
	c, err := storage.NewClient(ctx, storage.WithJSONReads())
	if err != nil {
		return nil, fmt.Errorf("storage client: %w", err)
	}
	return c, nil
}
