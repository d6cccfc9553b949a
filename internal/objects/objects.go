// Package objects reads and writes Cloud Storage objects: the landing files
// that trigger ingestion and the quarantine files it writes. One adapter, GCS,
// talks to Cloud Storage through cloud.google.com/go/storage; on a laptop and
// in tests the same adapter talks to the in-process fake of package fakegcs,
// which this package does not import, so production links no fake.
package objects

import (
	"errors"
	"io"
	"time"
)

// ErrNotFound is wrapped by every method when the object, or the requested
// generation of it, does not exist. Callers tell "the file is gone" (a newer
// generation replaced it; its own event will come) from transient failures
// with errors.Is.
var ErrNotFound = errors.New("objects: not found")

// Attrs describes one generation of an object.
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

// Writer streams the content of a new object. Nothing is visible until Close
// returns nil; Abort discards the upload and is a no-op after Close. When
// Abort returns, the upload has stopped and never sent its end, so the
// object does not appear later either (see gcsWriter.Abort for what a
// server must honour), and Close returns an error.
type Writer interface {
	io.Writer
	Close() error
	Abort()
	// Attrs describes the created generation; valid after a successful Close.
	Attrs() Attrs
}
