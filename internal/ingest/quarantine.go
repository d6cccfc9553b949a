package ingest

import (
	"bufio"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/objects"
)

// QuarantineHeader is the header of every quarantine file: the source line
// number, the stable reject code, the human reason and the raw line exactly
// as it was in the source (original bytes, so a fixed line can be re-queued
// through the same contract).
var QuarantineHeader = []string{"linea", "codigo", "motivo", "fila"}

// Metadata keys on quarantine objects, read back by re-queue.
const (
	MetaSourceObject     = "source-object"
	MetaSourceGeneration = "source-generation"
	MetaFeed             = "feed"
	MetaSourceHeader     = "source-header"
	// MetaSourceEncoding is set when the source is not UTF-8: the raw rows
	// in the fila column keep the source's bytes (windows-1252, ...).
	MetaSourceEncoding = "source-encoding"
)

// quarantineName is deterministic per source generation, so a retried
// attempt overwrites its own earlier quarantine file instead of adding one.
func quarantineName(prefix, feed string, obj Object) string {
	base := strings.TrimSuffix(strings.TrimSuffix(obj.Name, ".gz"), ".csv")
	return prefix + feed + "/" + base + ".g" + strconv.FormatInt(obj.Generation, 10) + ".csv"
}

// quarantine writes rejected rows of one file. The object is created on the
// first rejected row, so clean files leave no empty quarantine objects.
type quarantine struct {
	ctx     context.Context
	objects Objects
	bucket  string
	name    string
	meta    map[string]string
	ctype   string

	w       objects.Writer
	buf     *bufio.Writer
	csv     *csv.Writer
	rec     [4]string
	written bool
}

func newQuarantine(ctx context.Context, objs Objects, bucket, name string, src Object, feed *contract.Feed) *quarantine {
	q := &quarantine{ctx: ctx, objects: objs, bucket: bucket, name: name, ctype: "text/csv; charset=utf-8", meta: map[string]string{
		MetaSourceObject:     "gs://" + src.Bucket + "/" + src.Name,
		MetaSourceGeneration: strconv.FormatInt(src.Generation, 10),
		MetaFeed:             feed.Name(),
	}}
	if enc := feed.Encoding(); enc != contract.UTF8 {
		// Not one charset: the reasons are UTF-8, the raw rows the source's.
		q.ctype = "text/csv"
		q.meta[MetaSourceEncoding] = enc
	}
	return q
}

func (q *quarantine) setHeader(raw []byte) {
	if utf8.Valid(raw) && len(raw) < 4096 {
		q.meta[MetaSourceHeader] = string(raw)
	}
}

func (q *quarantine) add(line int, r contract.Reject, raw []byte) error {
	if q.w == nil {
		q.w = q.objects.Create(q.ctx, q.bucket, q.name, q.ctype, q.meta)
		q.buf = bufio.NewWriterSize(q.w, 64<<10)
		q.csv = csv.NewWriter(q.buf)
		if err := q.csv.Write(QuarantineHeader); err != nil {
			return err
		}
	}
	q.rec = [4]string{strconv.Itoa(line), r.Code, r.Detail, string(raw)}
	return q.csv.Write(q.rec[:])
}

// close commits the quarantine object, if any row was rejected.
func (q *quarantine) close() error {
	if q.w == nil {
		return nil
	}
	q.csv.Flush()
	if err := q.csv.Error(); err != nil {
		return err
	}
	if err := q.buf.Flush(); err != nil {
		return err
	}
	if err := q.w.Close(); err != nil {
		return err
	}
	q.written = true
	return nil
}

// abort discards an uncommitted quarantine object; a no-op after close.
func (q *quarantine) abort() {
	if q.w != nil && !q.written {
		q.w.Abort()
	}
}

func (q *quarantine) objectName() string {
	if !q.written {
		return ""
	}
	return q.name
}
