package ingest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// QuarantineHeader is the header of every quarantine file: source line,
// reject code, reason and the raw line in its original bytes, so that a
// fixed line can be re-queued through the same contract.
var QuarantineHeader = []string{"linea", "codigo", "motivo", "fila"}

// Metadata keys on quarantine objects, read back by re-queue.
const (
	MetaSourceObject     = "source-object"
	MetaSourceGeneration = "source-generation"
	MetaFeed             = "feed"
	MetaSourceHeader     = "source-header"
	MetaSourceEncoding   = "source-encoding" // when not UTF-8: the fila column's bytes
)

// A quarantine name must fit wherever it is stored (objname), or the
// rejected rows of a file have nowhere to go.
const (
	maxNameBytes    = objname.MaxObjectBytes
	maxSegmentBytes = objname.MaxSegmentBytes
	// maxQuarantinePrefix leaves any feed and object room in maxNameBytes.
	maxQuarantinePrefix = 512
)

// quarantineName is deterministic per source generation, so a retry
// overwrites its own quarantine file: <prefix><feed>/<object without .csv
// or .csv.gz>.g<generation>.csv. When that does not fit, the object part is
// cut and gets "~" and 16 hex digits of the SHA-256 of the landing name.
func quarantineName(prefix, feed string, obj Object) string {
	head := prefix + feed + "/"
	base := strings.TrimSuffix(strings.TrimSuffix(obj.Name, ".gz"), ".csv")
	tail := ".g" + strconv.FormatInt(obj.Generation, 10) + ".csv"
	if name := head + base + tail; objname.Fits(name) {
		return name
	}
	sum := sha256.Sum256([]byte(obj.Name))
	tail = "~" + hex.EncodeToString(sum[:8]) + tail
	segs := strings.Split(base, "/")
	for i, seg := range segs {
		segs[i] = objname.Cut(seg, maxSegmentBytes)
	}
	short := objname.Cut(strings.Join(segs, "/"), maxNameBytes-len(head)-len(tail))
	dir, last := "", short
	if i := strings.LastIndexByte(short, '/'); i >= 0 {
		dir, last = short[:i+1], short[i+1:]
	}
	return head + dir + objname.Cut(last, maxSegmentBytes-len(tail)) + tail
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
	closed  bool
	err     error // of close
	written bool  // committed: close succeeded

	scratch bytes.Buffer // the leading fields of a row whose fila is streamed
	lead    *csv.Writer
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

// add writes one rejected row. rest, when not nil, streams the rest of a
// row longer than the reader's limit (record.Reader.CopyRest) into fila.
func (q *quarantine) add(line int, r contract.Reject, raw []byte, rest func(io.Writer) (int64, error)) error {
	if q.w == nil {
		q.w = q.objects.Create(q.ctx, q.bucket, q.name, q.ctype, q.meta)
		q.buf = bufio.NewWriterSize(q.w, 64<<10)
		q.csv = csv.NewWriter(q.buf)
		if err := q.csv.Write(QuarantineHeader); err != nil {
			return err
		}
	}
	q.rec = [4]string{strconv.Itoa(line), r.Code, r.Detail, string(raw)}
	if rest == nil {
		return q.csv.Write(q.rec[:])
	}
	// encoding/csv writes whole fields only: fila is quoted here as it would.
	if q.lead == nil {
		q.lead = csv.NewWriter(&q.scratch)
	}
	q.scratch.Reset()
	if err := q.lead.Write(q.rec[:3]); err != nil {
		return err
	}
	q.lead.Flush()
	q.csv.Flush()
	if err := q.csv.Error(); err != nil {
		return err
	}
	q.buf.Write(bytes.TrimSuffix(q.scratch.Bytes(), []byte{'\n'}))
	q.buf.WriteString(`,"`)
	if _, err := (quoted{q.buf}).Write(raw); err != nil {
		return err
	}
	if _, err := rest(quoted{q.buf}); err != nil {
		return err
	}
	_, err := q.buf.WriteString("\"\n")
	return err
}

// quoted writes the inside of a quoted CSV field: every quote doubled.
type quoted struct{ w *bufio.Writer }

func (q quoted) Write(p []byte) (int, error) {
	out := p
	if bytes.IndexByte(p, '"') >= 0 { // ReplaceAll copies even when there is nothing to double
		out = bytes.ReplaceAll(p, []byte{'"'}, []byte{'"', '"'})
	}
	if _, err := q.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// close commits the quarantine object, if any; later calls report the first's outcome.
func (q *quarantine) close() error {
	if q.w == nil || q.closed {
		return q.err
	}
	q.closed = true
	q.csv.Flush()
	q.err = q.csv.Error()
	if q.err == nil {
		q.err = q.buf.Flush()
	}
	if q.err == nil {
		q.err = q.w.Close()
	}
	if q.err != nil {
		q.err = fmt.Errorf("write quarantine: %w", q.err)
		return q.err
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
