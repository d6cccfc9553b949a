package ingest

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/alpinashop/alpipe/internal/objects"
)

// Describer reads the attributes of one exact generation. An Objects that
// has it (objects.GCS) lets an event without md5Hash still be recognised
// as a copy from the MD5 Cloud Storage keeps; without it, or for a
// composite object (which has only a CRC32C), the MD5 is computed.
type Describer interface {
	Describe(ctx context.Context, bucket, name string, generation int64) (objects.Attrs, error)
}

var _ Describer = (*objects.GCS)(nil)

// contentMD5 is the MD5 the ledger deduplicates obj by: the event's; else
// the generation's own, from its metadata; else computed by streaming the
// generation once before the claim. The MD5 must be known at the claim,
// because the claim is the one transaction that decides "copy of loaded
// content" against every concurrent attempt (the MD5 index and the record
// change together): deciding after the load has read the rows would need a
// second decision racing the first. The extra read costs one pass over a
// composite object, which only parallel uploads of large files create.
//
// A generation already gone gets "" (the attempt then finds it gone and
// records so). A failure to read it is transient.
func (s *Service) contentMD5(ctx context.Context, obj Object) (string, error) {
	if obj.MD5 != "" {
		return obj.MD5, nil
	}
	if d, ok := s.objects.(Describer); ok {
		a, err := d.Describe(ctx, obj.Bucket, obj.Name, obj.Generation)
		switch {
		case errors.Is(err, objects.ErrNotFound):
			return "", nil
		case err != nil:
			return "", fmt.Errorf("md5 of %s: %w", obj.Key(), err)
		case a.MD5 != "":
			return a.MD5, nil
		}
	}
	return s.computeMD5(ctx, obj)
}

// computeMD5 hashes the generation as Open returns it. An object stored
// with Content-Encoding: gzip comes back inflated, so its hash is of the
// text rather than the stored bytes; such copies still match each other.
// The read is bounded as the load's is (the stored size times the
// expansion limit): past it, or with the size unknown, there is no MD5 and
// the file is loaded (or refused as a bomb) like a composite one before.
func (s *Service) computeMD5(ctx context.Context, obj Object) (string, error) {
	if obj.Size <= 0 {
		return "", nil
	}
	body, err := s.objects.Open(ctx, obj.Bucket, obj.Name, obj.Generation)
	if errors.Is(err, objects.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("md5 of %s: open: %w", obj.Key(), err)
	}
	defer body.Close()
	ratio := s.cfg.MaxExpansion
	if ratio <= 0 {
		ratio = DefaultMaxExpansion
	}
	limit := obj.Size*int64(ratio) + expansionSlack
	h := md5.New()
	n, err := io.Copy(h, io.LimitReader(body, limit+1))
	switch {
	case errors.Is(err, objects.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("md5 of %s: read: %w", obj.Key(), err)
	case n > limit:
		return "", nil
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}
