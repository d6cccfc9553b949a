package reingest

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/render"
)

type RequeueObjects interface {
	Stat(ctx context.Context, bucket, name string) (objects.Attrs, error)
	Open(ctx context.Context, bucket, name string, generation int64) (io.ReadCloser, error)
	Create(ctx context.Context, bucket, name, contentType string, metadata map[string]string) objects.Writer
}

// Requeue turns a quarantine file, after a person fixed its raw lines, into
// a new landing object of the same feed and ingests it: the fixed rows load
// once, the rows still wrong go to a new quarantine file. Nothing else is
// special about it, so re-queueing the same content again is a DUPLICATE.
type Requeue struct {
	Objects RequeueObjects
	Ingest  Ingester
	Feeds   *contract.Registry
	Now     func() time.Time // names the new object; default time.Now
	// LandingBucket receives the new object when the quarantine file lost
	// the metadata saying where its source was (an edited copy uploaded).
	LandingBucket string
}

type RequeueRequest struct {
	Bucket, Name string    // the quarantine object
	Rows         io.Reader // the CSV as fixed in a local copy; nil: the object's
	Object       string    // the new landing object; "": RequeueName
	// DeclaredHeader writes the feed's declared header instead of the
	// source file's (for a file rejected because of its header).
	DeclaredHeader bool
}

type RequeueResult struct {
	Quarantine string        `json:"quarantine"` // gs://bucket/name#generation read
	Source     string        `json:"source"`     // gs://bucket/name of the original file
	Feed       string        `json:"feed"`
	Landing    string        `json:"landing"` // gs://bucket/name#generation written
	Rows       int64         `json:"rows"`    // rows written to the landing object
	Blank      int64         `json:"blank"`   // rows left out because their fila was emptied
	Record     ledger.Record `json:"record"`
}

func (r *Requeue) Run(ctx context.Context, req RequeueRequest) (RequeueResult, error) {
	var res RequeueResult
	if r.Objects == nil || r.Ingest == nil || r.Feeds == nil {
		return res, errors.New("requeue: objects, ingester and feeds are required")
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	q, err := r.Objects.Stat(ctx, req.Bucket, req.Name)
	if err != nil {
		return res, fmt.Errorf("requeue: %w", err)
	}
	res.Quarantine = ledger.Key{Bucket: q.Bucket, Object: q.Name, Generation: q.Generation}.String()
	feed, srcBucket, srcName, err := r.origin(q)
	if err != nil {
		return res, fmt.Errorf("requeue %s: %w", res.Quarantine, err)
	}
	res.Feed, res.Source = feed.Name(), "gs://"+srcBucket+"/"+srcName

	name := cmp.Or(req.Object, RequeueName(srcName, now()))
	if f, ok := r.Feeds.Match(name); !ok || f.Name() != feed.Name() {
		return res, fmt.Errorf("requeue %s: object name %s does not match feed %s's object pattern; name one that does", res.Quarantine, name, feed.Name())
	}
	header := q.Metadata[ingest.MetaSourceHeader]
	if req.DeclaredHeader || header == "" {
		header = strings.Join(feed.Header(), ",") // column names: nothing to quote
	}

	rows := req.Rows
	if rows == nil {
		body, err := r.Objects.Open(ctx, q.Bucket, q.Name, q.Generation)
		if err != nil {
			return res, fmt.Errorf("requeue: %w", err)
		}
		defer body.Close()
		rows = body
	}
	meta := map[string]string{MetaRequeueOf: res.Quarantine, ingest.MetaSourceObject: res.Source}
	w := r.Objects.Create(ctx, srcBucket, name, "text/csv; charset=utf-8", meta)
	res.Rows, res.Blank, err = copyRows(w, header, rows)
	if err == nil && res.Rows == 0 {
		err = errors.New("no row left to re-queue")
	}
	if err != nil {
		w.Abort()
		return res, fmt.Errorf("requeue %s: %w", res.Quarantine, err)
	}
	if err := w.Close(); err != nil {
		return res, fmt.Errorf("requeue %s: write gs://%s/%s: %w", res.Quarantine, srcBucket, name, err)
	}
	landed := w.Attrs()
	res.Landing = ledger.Key{Bucket: landed.Bucket, Object: landed.Name, Generation: landed.Generation}.String()
	res.Record, err = r.Ingest.Ingest(ctx, landed)
	if err != nil {
		return res, fmt.Errorf("requeue %s: ingest %s: %w", res.Quarantine, res.Landing, err)
	}
	return res, nil
}

// MetaRequeueOf on a re-queued object names its quarantine file.
const MetaRequeueOf = "requeue-of"

// origin finds the quarantine file's feed and source object from its
// metadata, or else from its name.
func (r *Requeue) origin(q objects.Attrs) (feed *contract.Feed, bucket, name string, err error) {
	if src := q.Metadata[ingest.MetaSourceObject]; src != "" {
		b, n, ok, err := ParseGS(src)
		if err != nil || !ok || n == "" {
			return nil, "", "", fmt.Errorf("metadata %s=%q is not gs://BUCKET/OBJECT", ingest.MetaSourceObject, src)
		}
		f, ok := r.Feeds.Feed(q.Metadata[ingest.MetaFeed])
		if !ok {
			if f, ok = r.Feeds.Match(n); !ok {
				return nil, "", "", fmt.Errorf("no feed claims the source %s", src)
			}
		}
		return f, b, n, nil
	}
	f, n, err := SourceOf(r.Feeds, q.Name)
	if err != nil {
		return nil, "", "", fmt.Errorf("metadata %s is gone: %w", ingest.MetaSourceObject, err)
	}
	if r.LandingBucket == "" {
		return nil, "", "", fmt.Errorf("metadata %s is gone and no landing bucket is configured", ingest.MetaSourceObject)
	}
	return f, r.LandingBucket, n, nil
}

// copyRows writes header and the fila column of every quarantine row to w,
// and counts the rows written and left out as blank.
func copyRows(w io.Writer, header string, quarantine io.Reader) (rows, blank int64, err error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString(strings.TrimRight(header, "\r\n") + "\n"); err != nil {
		return 0, 0, err
	}
	cr := csv.NewReader(quarantine)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1 // checked below, to say what is wrong
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return 0, 0, errors.New("the quarantine file is empty")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("read the quarantine header: %w", err)
	}
	head[0] = strings.TrimPrefix(head[0], "\ufeff") // a spreadsheet's BOM
	if !slices.Equal(head, ingest.QuarantineHeader) {
		return 0, 0, fmt.Errorf("header %q is not a quarantine file's %q", head, ingest.QuarantineHeader)
	}
	fila := slices.Index(ingest.QuarantineHeader, "fila")
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rows, blank, fmt.Errorf("read the quarantine file: %w", err)
		}
		if len(rec) != len(ingest.QuarantineHeader) {
			line, _ := cr.FieldPos(0)
			return rows, blank, fmt.Errorf("quarantine file line %d: %d fields, want %d (%s)", line, len(rec), len(ingest.QuarantineHeader), strings.Join(ingest.QuarantineHeader, ","))
		}
		raw := rec[fila]
		if strings.TrimSpace(raw) == "" {
			blank++ // the person emptied it: drop the row
			continue
		}
		if _, err := bw.WriteString(raw + "\n"); err != nil {
			return rows, blank, err
		}
		rows++
	}
	return rows, blank, bw.Flush()
}

func WriteRequeue(w io.Writer, res RequeueResult, quarantineBucket string) {
	fmt.Fprintf(w, "requeued %s (%d rows", res.Quarantine, res.Rows)
	if res.Blank > 0 {
		fmt.Fprintf(w, ", %d emptied rows left out", res.Blank)
	}
	fmt.Fprintf(w, ")\n  as %s (feed %s, source %s)\n", res.Landing, res.Feed, res.Source)
	rec := res.Record
	c := rec.Counts
	fmt.Fprintf(w, "  status: %s  rows read/loaded/quarantined: %d/%d/%d\n", rec.State, c.Read, c.Loaded, c.Quarantined)
	switch {
	case rec.DuplicateOf != nil:
		fmt.Fprintf(w, "  same content as %s: nothing loaded again\n", rec.DuplicateOf)
	case rec.Reason != "":
		fmt.Fprintf(w, "  reason: %s\n", render.OneLine(rec.Reason))
	}
	for _, code := range slices.Sorted(maps.Keys(c.Rejects)) {
		fmt.Fprintf(w, "  still wrong: %s %d\n", code, c.Rejects[code])
	}
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  back in quarantine: gs://%s/%s\n", quarantineBucket, rec.Quarantine)
	}
}

var _ RequeueObjects = (*objects.GCS)(nil)

var (
	quarantineSuffix = regexp.MustCompile(`^(.+)\.g[0-9]+\.csv$`)
	// shortened is how ingest's quarantineName ends an object part it cut.
	shortened = regexp.MustCompile(`~[0-9a-f]{16}$`)
)

// SourceOf reads back the feed and source object from a quarantine object
// name, <prefix><feed>/<object without .csv>.g<generation>.csv. A name
// ingest shortened (…~<hash>.g<generation>.csv) has lost part of the source
// name: it is refused rather than read back as a file that never existed.
func SourceOf(feeds *contract.Registry, quarantine string) (*contract.Feed, string, error) {
	for _, f := range feeds.Feeds() {
		seg := f.Name() + "/"
		for i := 0; ; {
			j := strings.Index(quarantine[i:], seg)
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if at > 0 && quarantine[at-1] != '/' {
				continue
			}
			m := quarantineSuffix.FindStringSubmatch(quarantine[at+len(seg):])
			if m == nil {
				continue
			}
			if shortened.MatchString(m[1]) {
				return nil, "", fmt.Errorf("the source name cannot be read back from a shortened name (…~<hash>.g<generation>.csv: ingest cut a name too long to store); the object's metadata %s=gs://BUCKET/OBJECT is needed", ingest.MetaSourceObject)
			}
			src := m[1] + ".csv"
			if g, ok := feeds.Match(src); ok && g.Name() == f.Name() {
				return f, src, nil
			}
		}
	}
	return nil, "", fmt.Errorf("the name is not <prefix><feed>/<object>.g<generation>.csv of a feed's object, so it does not say which file it quarantines")
}

var requeueSuffix = regexp.MustCompile(`\.requeue-[0-9]{8}T[0-9]{6}Z$`)

// RequeueName names a re-queued file next to its source: dir/name.csv
// becomes dir/name.requeue-20260315T083000Z.csv (a re-queue of a re-queue
// replaces the time; a .gz source loses its .gz, the new object being plain
// CSV). A name that does not fit where objects are stored (objname) has its
// file name cut and "~" and 16 hex digits of the SHA-256 of the source name
// added, so long names that share a beginning stay apart. The feed's
// pattern constrains the folders, so only the file name is cut.
func RequeueName(source string, now time.Time) string {
	dir, file := path.Split(source)
	stem := strings.TrimSuffix(file, ".gz")
	ext := path.Ext(stem)
	stem = strings.TrimSuffix(stem, ext)
	base := requeueSuffix.ReplaceAllString(stem, "")
	original := dir + base + file[len(stem):]
	if ext == "" {
		ext = ".csv"
	}
	tail := ".requeue-" + now.UTC().Format("20060102T150405Z") + ext
	if name := dir + base + tail; objname.Fits(name) {
		return name
	}
	sum := sha256.Sum256([]byte(original))
	tail = "~" + hex.EncodeToString(sum[:8]) + tail
	room := min(objname.MaxSegmentBytes, objname.MaxObjectBytes-len(dir)) - len(tail)
	return dir + objname.Cut(base, room) + tail
}

// ParseGS splits "gs://bucket/path". ok is false without gs:// (a name in
// the local server's bucket).
func ParseGS(s string) (bucket, path string, ok bool, err error) {
	rest, found := strings.CutPrefix(s, "gs://")
	if !found {
		return "", s, false, nil
	}
	bucket, path, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", true, fmt.Errorf("%q names no bucket: want gs://BUCKET/PATH", s)
	}
	return bucket, path, true, nil
}
