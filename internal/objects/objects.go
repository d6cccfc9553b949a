// Package objects reads and writes Cloud Storage objects through one
// adapter, GCS, which talks to the in-process fake of package fakegcs on a
// laptop and in tests (not imported here: production links no fake).
package objects

import (
	"errors"
	"io"
	"time"
)

// ErrNotFound is wrapped by every method when the object, or the requested
// generation of it, does not exist: "the file is gone", not a transient failure.
var ErrNotFound = errors.New("objects: not found")

type Attrs struct {
	Bucket     string
	Name       string
	Generation int64
	Size       int64
	// MD5 is the base64 MD5 of the content, as Cloud Storage reports it; ""
	// for composite objects, which have only a CRC32C.
	MD5      string
	CRC32C   uint32
	Metadata map[string]string
	Created  time.Time
}

// Writer streams the content of a new object, visible once Close returns
// nil. Abort discards the upload for good (gcsWriter.Abort) and makes Close
// fail; after Close it is a no-op.
type Writer interface {
	io.Writer
	Close() error
	Abort()
	// Attrs describes the created generation; valid after a successful Close.
	Attrs() Attrs
}
