package objects

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
)

// DefaultChunkSize is the upload chunk of a Writer. The storage library
// allocates one chunk per writer up front (its own default is 16 MiB) and
// retries a failed chunk from it, so this bounds both the memory of an
// upload and the bytes re-sent after a transient error: 4 MiB keeps a
// writer small on Cloud Run and still sends a 45 MB file to Cloud Storage
// in 12 requests. (The local fake holds a whole upload, up to 64 MiB: see
// fakegcs.)
const DefaultChunkSize = 4 << 20

// GCS is the Cloud Storage adapter.
type GCS struct {
	client    *storage.Client
	chunkSize int
}

// NewGCS wraps a client built by NewClient or fakegcs.Server.Client. A
// client built otherwise needs storage.WithJSONReads to read from the fake:
// XML reads use paths outside fakegcs.Paths.
func NewGCS(c *storage.Client) (*GCS, error) {
	if c == nil {
		return nil, errors.New("objects: nil storage client")
	}
	return &GCS{client: c, chunkSize: DefaultChunkSize}, nil
}

// WithChunkSize returns a copy whose writers upload in chunks of n bytes
// (rounded up to 256 KiB by the library). n = 0 sends each object in a single
// request without a buffer: constant memory whatever the chunk, but a failed
// upload cannot be retried by the library.
func (g *GCS) WithChunkSize(n int) *GCS {
	c := *g
	c.chunkSize = max(n, 0)
	return &c
}

// Open reads one exact generation (0 = the live one), streaming. The library
// checks the CRC32C of a full read at EOF, so a torn read surfaces as an
// error from Read rather than as wrong bytes.
//
// An object stored with Content-Encoding: gzip comes back inflated (see
// TestOpenInflatesStoredGzip): Go's transport asks for gzip and inflates
// the answer as it streams, unbounded and without the CRC32C check, so a
// reader that must bound the expansion bounds the text by the object's
// stored size (the ingest does). ReadCompressed(true) would return the
// stored bytes, but with JSON reads (which the fake needs, see NewClient)
// the API library refuses the request ("custom Accept-Encoding headers not
// allowed").
func (g *GCS) Open(ctx context.Context, bucket, name string, generation int64) (io.ReadCloser, error) {
	if generation < 0 {
		return nil, fmt.Errorf("open %s: negative generation %d", describe(bucket, name, 0), generation)
	}
	o := g.client.Bucket(bucket).Object(name)
	if generation > 0 {
		o = o.Generation(generation)
	}
	r, err := o.NewReader(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", describe(bucket, name, generation), mapErr(err))
	}
	return r, nil
}

// Create starts a streaming upload; nothing is visible until Close succeeds.
func (g *GCS) Create(ctx context.Context, bucket, name, contentType string, metadata map[string]string) Writer {
	ctx, cancel := context.WithCancel(ctx)
	w := g.client.Bucket(bucket).Object(name).NewWriter(ctx)
	w.ChunkSize = g.chunkSize
	w.ContentType = contentType
	w.Metadata = maps.Clone(metadata)
	return &gcsWriter{w: w, cancel: cancel, bucket: bucket, name: name}
}

// Delete removes the live generation; a missing object is not an error.
func (g *GCS) Delete(ctx context.Context, bucket, name string) error {
	err := g.client.Bucket(bucket).Object(name).Delete(ctx)
	if err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("delete %s: %w", describe(bucket, name, 0), err)
	}
	return nil
}

// Stat describes the live generation.
func (g *GCS) Stat(ctx context.Context, bucket, name string) (Attrs, error) {
	a, err := g.client.Bucket(bucket).Object(name).Attrs(ctx)
	if err != nil {
		return Attrs{}, fmt.Errorf("stat %s: %w", describe(bucket, name, 0), mapErr(err))
	}
	return toAttrs(a), nil
}

// Describe describes one exact generation (0: the live one); a generation
// that no longer exists wraps ErrNotFound.
func (g *GCS) Describe(ctx context.Context, bucket, name string, generation int64) (Attrs, error) {
	if generation < 0 {
		return Attrs{}, fmt.Errorf("describe %s: negative generation %d", describe(bucket, name, 0), generation)
	}
	o := g.client.Bucket(bucket).Object(name)
	if generation > 0 {
		o = o.Generation(generation)
	}
	a, err := o.Attrs(ctx)
	if err != nil {
		return Attrs{}, fmt.Errorf("describe %s: %w", describe(bucket, name, generation), mapErr(err))
	}
	return toAttrs(a), nil
}

// List yields the live generation of every object whose name starts with
// prefix, in name order, fetching pages as the caller iterates. A missing
// bucket is an error wrapping storage.ErrBucketNotExist, not ErrNotFound: it
// is a configuration problem, never "the file is gone".
func (g *GCS) List(ctx context.Context, bucket, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		q := &storage.Query{Prefix: prefix}
		if err := q.SetAttrSelection(listedAttrs); err != nil {
			yield(Attrs{}, fmt.Errorf("list gs://%s/%s: %w", bucket, prefix, err))
			return
		}
		it := g.client.Bucket(bucket).Objects(ctx, q)
		for {
			a, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return
			}
			if err != nil {
				yield(Attrs{}, fmt.Errorf("list gs://%s/%s: %w", bucket, prefix, err))
				return
			}
			if !yield(toAttrs(a), nil) {
				return
			}
		}
	}
}

// listedAttrs asks the service for only the fields Attrs carries, which
// keeps list pages small on buckets with many objects.
var listedAttrs = []string{"Bucket", "Name", "Generation", "Size", "MD5", "CRC32C", "Metadata", "Created"}

func toAttrs(a *storage.ObjectAttrs) Attrs {
	out := Attrs{
		Bucket:     a.Bucket,
		Name:       a.Name,
		Generation: a.Generation,
		Size:       a.Size,
		CRC32C:     a.CRC32C,
		Created:    a.Created,
	}
	if len(a.MD5) > 0 {
		out.MD5 = base64.StdEncoding.EncodeToString(a.MD5)
	}
	if len(a.Metadata) > 0 {
		out.Metadata = maps.Clone(a.Metadata)
	}
	return out
}

// mapErr makes "object or generation missing" recognisable as ErrNotFound
// while keeping the library's error in the chain.
func mapErr(err error) error {
	if errors.Is(err, storage.ErrObjectNotExist) {
		return notFound{err}
	}
	return err
}

// notFound is ErrNotFound with the library's cause, on one log line.
type notFound struct{ cause error }

func (e notFound) Error() string   { return e.cause.Error() }
func (e notFound) Unwrap() []error { return []error{ErrNotFound, e.cause} }

func describe(bucket, name string, generation int64) string {
	if generation > 0 {
		return fmt.Sprintf("gs://%s/%s#%d", bucket, name, generation)
	}
	return fmt.Sprintf("gs://%s/%s", bucket, name)
}
