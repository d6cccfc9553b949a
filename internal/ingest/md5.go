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

// Describer reads the attributes of one exact generation, where Cloud
// Storage keeps the MD5 (not for a composite object).
type Describer interface {
	Describe(ctx context.Context, bucket, name string, generation int64) (objects.Attrs, error)
}

var _ Describer = (*objects.GCS)(nil)

// contentMD5 is the MD5 the ledger deduplicates obj by: the event's, else
// the generation's metadata's, else computed by reading it once. It must be
// known at the claim, the one transaction that decides "copy of loaded
// content" against concurrent attempts. A generation already gone gets "".
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

// computeMD5 hashes the generation as Open returns it (inflated, for
// Content-Encoding: gzip), bounded as the load is: past the bound, or with
// the size unknown, there is no MD5.
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
	limit := expansionLimit(obj.Size)
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
