package reingest

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

// RequeueObjects reads quarantine files and writes landing files
// (objects.GCS).
type RequeueObjects interface {
	Stat(ctx context.Context, bucket, name string) (objects.Attrs, error)
	Open(ctx context.Context, bucket, name string, generation int64) (io.ReadCloser, error)
	Create(ctx context.Context, bucket, name, contentType string, metadata map[string]string) objects.Writer
}

// Requeue turns a quarantine file, after a person fixed its raw lines, into
// a new landing object of the same feed, and ingests that object through
// the file-drop path: the fixed rows load once, the rows still wrong go to
// a new quarantine file with their reason. Nothing else is special about a
// re-queued file, so the ledger's rules hold for it too: re-queueing the
// same content again is recorded as a DUPLICATE and loads nothing.
type Requeue struct {
	Objects RequeueObjects
	Ingest  Ingester
	Feeds   *contract.Registry
	// Now names the new object; default time.Now.
	Now func() time.Time
	// LandingBucket receives the new object when the quarantine file no
	// longer says where its source was (an edited copy uploaded again loses
	// the object metadata).
	LandingBucket string
}

// RequeueRequest names the quarantine file and how to re-queue it.
type RequeueRequest struct {
	Bucket, Name string // the quarantine object
	// Rows, when set, is the quarantine CSV as fixed in a local copy; the
	// object itself then only provides its metadata.
	Rows io.Reader
	// Object is the new landing object's name; "" puts it next to the
	// source as <name>.requeue-<UTC time>.csv.
	Object string
	// DeclaredHeader writes the feed's declared header instead of the
	// source file's (for a file rejected because of its header).
	DeclaredHeader bool
}

// RequeueResult says what was written and what ingesting it did.
type RequeueResult struct {
	Quarantine string        `json:"quarantine"` // gs://bucket/name#generation read
	Source     string        `json:"source"`     // gs://bucket/name of the original file
	Feed       string        `json:"feed"`
	Landing    string        `json:"landing"` // gs://bucket/name#generation written
	Rows       int64         `json:"rows"`    // rows written to the landing object
	Blank      int64         `json:"blank"`   // rows left out because their fila was emptied
	Record     ledger.Record `json:"record"`
}

// Run re-queues one quarantine file.
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
		if header, err = csvLine(feed.Header()); err != nil {
			return res, err
		}
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

// MetaRequeueOf on a re-queued landing object names the quarantine file it
// came from.
const MetaRequeueOf = "requeue-of"

// origin finds the quarantine file's feed and source object: from its
// metadata, or else from its name, which ingest derives from both.
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
// streaming, and returns how many rows it wrote and left out as blank.
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

func csvLine(fields []string) (string, error) {
	var b strings.Builder
	cw := csv.NewWriter(&b)
	if err := cw.Write(fields); err != nil {
		return "", err
	}
	cw.Flush()
	return strings.TrimSuffix(b.String(), "\n"), cw.Error()
}

// WriteRequeue prints a re-queue's outcome for a person.
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
		fmt.Fprintf(w, "  reason: %s\n", oneLine(rec.Reason))
	}
	for _, code := range slices.Sorted(maps.Keys(c.Rejects)) {
		fmt.Fprintf(w, "  still wrong: %s %d\n", code, c.Rejects[code])
	}
	if rec.Quarantine != "" {
		fmt.Fprintf(w, "  back in quarantine: gs://%s/%s\n", quarantineBucket, rec.Quarantine)
	}
}

var _ RequeueObjects = (*objects.GCS)(nil)
