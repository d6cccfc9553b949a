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

// DefaultChunkSize is the upload chunk of a Writer, which the library
// allocates up front and re-sends after a transient error: 4 MiB keeps a
// writer small on Cloud Run and sends a 45 MB file in 12 requests.
const DefaultChunkSize = 4 << 20

type GCS struct {
	client    *storage.Client
	chunkSize int
}

// NewGCS wraps a client built by NewClient or fakegcs.Server.Client (others
// need storage.WithJSONReads to read from the fake).
func NewGCS(c *storage.Client) (*GCS, error) {
	if c == nil {
		return nil, errors.New("objects: nil storage client")
	}
	return &GCS{client: c, chunkSize: DefaultChunkSize}, nil
}

// WithChunkSize returns a copy whose writers upload in chunks of n bytes
// (rounded up to 256 KiB); 0 sends each object in one unbuffered request,
// which the library cannot retry.
func (g *GCS) WithChunkSize(n int) *GCS {
	c := *g
	c.chunkSize = max(n, 0)
	return &c
}

// Open reads one exact generation (0 = the live one), streaming; the
// library checks the CRC32C of a full read at EOF.
//
// An object stored with Content-Encoding: gzip comes back inflated, without
// bound or CRC32C check, so a reader that must bound the expansion bounds
// it by the stored size (the ingest does). ReadCompressed(true) is refused
// with JSON reads, which the fake needs.
func (g *GCS) Open(ctx context.Context, bucket, name string, generation int64) (io.ReadCloser, error) {
	o, err := g.object("open", bucket, name, generation)
	if err != nil {
		return nil, err
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
	o, err := g.object("describe", bucket, name, generation)
	if err != nil {
		return Attrs{}, err
	}
	a, err := o.Attrs(ctx)
	if err != nil {
		return Attrs{}, fmt.Errorf("describe %s: %w", describe(bucket, name, generation), mapErr(err))
	}
	return toAttrs(a), nil
}

func (g *GCS) object(op, bucket, name string, generation int64) (*storage.ObjectHandle, error) {
	o := g.client.Bucket(bucket).Object(name)
	switch {
	case generation < 0:
		return nil, fmt.Errorf("%s %s: negative generation %d", op, describe(bucket, name, 0), generation)
	case generation > 0:
		o = o.Generation(generation)
	}
	return o, nil
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

// listedAttrs asks only for the fields Attrs carries: smaller list pages.
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
