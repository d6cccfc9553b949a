package client

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/reingest"
	"github.com/alpinashop/alpipe/internal/status"
)

// DefaultObject names a local file in the landing bucket the way the ERP
// does: reviews under exportaciones/YYYY/MM/, order lines under
// exportaciones/YYYY/MM/DD/, dated by day.
func DefaultObject(file string, day time.Time) string {
	base := filepath.Base(file)
	if strings.HasPrefix(base, "opiniones-") {
		return path.Join("exportaciones", day.Format("2006/01"), base)
	}
	return path.Join("exportaciones", day.Format("2006/01/02"), base)
}

// Storage talks to the server's fake through STORAGE_EMULATOR_HOST, as any
// other process would.
func (s Server) Storage(ctx context.Context) (*objects.GCS, func(), error) {
	if err := s.Ping(ctx); err != nil {
		return nil, nil, err
	}
	u, _ := url.Parse(s.URL) // Ping reached it
	if err := os.Setenv("STORAGE_EMULATOR_HOST", u.Host); err != nil {
		return nil, nil, err
	}
	c, err := objects.NewClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	g, err := objects.NewGCS(c)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return g, func() { c.Close() }, nil
}

// Upload refuses a name the server would refuse, or could store but never
// deliver an event for, before anything is sent.
func (s Server) Upload(ctx context.Context, bucket, object, file string) (objects.Attrs, error) {
	if err := objname.Bucket(bucket); err != nil {
		return objects.Attrs{}, err
	}
	if err := objname.Local(object); err != nil {
		return objects.Attrs{}, err
	}
	f, err := os.Open(file)
	if err != nil {
		return objects.Attrs{}, err
	}
	defer f.Close()
	gcs, closeFn, err := s.Storage(ctx)
	if err != nil {
		return objects.Attrs{}, err
	}
	defer closeFn()
	w := gcs.Create(ctx, bucket, object, "text/csv", nil)
	if _, err := io.Copy(w, f); err != nil {
		w.Abort()
		return objects.Attrs{}, fmt.Errorf("upload %s: %w", file, err)
	}
	if err := w.Close(); err != nil {
		return objects.Attrs{}, fmt.Errorf("upload %s: %w", file, err)
	}
	return w.Attrs(), nil
}

// FinalizeEvent builds the CloudEvent Eventarc sends for a new generation:
// binary mode, StorageObjectData with its int64 fields as JSON strings.
func FinalizeEvent(a objects.Attrs, now time.Time) (cloudevents.Event, error) {
	e := cloudevents.NewEvent()
	e.SetID(rand.Text())
	e.SetType(localapi.FinalizedType)
	e.SetSource("//storage.googleapis.com/projects/_/buckets/" + a.Bucket)
	e.SetSubject("objects/" + a.Name)
	e.SetTime(now)
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], a.CRC32C)
	data := map[string]any{
		"kind":           "storage#object",
		"bucket":         a.Bucket,
		"name":           a.Name,
		"generation":     strconv.FormatInt(a.Generation, 10),
		"metageneration": "1",
		"size":           strconv.FormatInt(a.Size, 10),
		"md5Hash":        a.MD5,
		"crc32c":         base64.StdEncoding.EncodeToString(crc[:]),
		"contentType":    "text/csv",
		"timeCreated":    a.Created.UTC().Format(time.RFC3339Nano),
		"updated":        a.Created.UTC().Format(time.RFC3339Nano),
	}
	return e, e.SetData(cloudevents.ApplicationJSON, data)
}

// Deliver sends e to the function at url as Eventarc does.
func Deliver(ctx context.Context, url string, e cloudevents.Event) (int, error) {
	c, err := cloudevents.NewClientHTTP()
	if err != nil {
		return 0, err
	}
	res := c.Send(cloudevents.ContextWithTarget(ctx, url), e)
	var hr *cehttp.Result
	if cloudevents.ResultAs(res, &hr) {
		if cloudevents.IsACK(res) {
			return hr.StatusCode, nil
		}
		return hr.StatusCode, fmt.Errorf("event not acknowledged: HTTP %d: %v", hr.StatusCode, res)
	}
	// The request never left (a header value the HTTP client refuses) or
	// nothing answered: saying so is the caller's only way to know.
	if res == nil {
		return 0, fmt.Errorf("deliver to %s: no HTTP answer", url)
	}
	return 0, fmt.Errorf("deliver to %s: %w", url, res)
}

func (s Server) Drop(ctx context.Context, object, file string) (ledger.Record, error) {
	attrs, err := s.Upload(ctx, localapi.LandingBucket, object, file)
	if err != nil {
		return ledger.Record{}, err
	}
	return s.Ingest(ctx, attrs)
}

// Ingest retries a 409 (another attempt holds the generation) as Eventarc
// would.
func (s Server) Ingest(ctx context.Context, attrs objects.Attrs) (ledger.Record, error) {
	e, err := FinalizeEvent(attrs, time.Now())
	if err != nil {
		return ledger.Record{}, err
	}
	key := ledger.Key{Bucket: attrs.Bucket, Object: attrs.Name, Generation: attrs.Generation}
	for delay := 100 * time.Millisecond; ; delay *= 2 {
		status, err := Deliver(ctx, s.URL+localapi.FunctionPath(localapi.IngestCSV), e)
		if err == nil {
			rec, ok, err := s.Get(ctx, key)
			if err == nil && !ok {
				err = fmt.Errorf("ledger record %s: none after the ingest", key)
			}
			return rec, err
		}
		if status == 0 {
			if networkError(err) {
				return ledger.Record{}, fmt.Errorf("ingest %s: %w", key, s.unreachable(err))
			}
			return ledger.Record{}, fmt.Errorf("ingest %s: event not delivered: %w", key, err)
		}
		if status != http.StatusConflict || delay > 30*time.Second {
			return ledger.Record{}, fmt.Errorf("ingest %s: %w", key, err)
		}
		select {
		case <-ctx.Done():
			return ledger.Record{}, ctx.Err()
		case <-time.After(delay):
		}
	}
}

func (s Server) Ledger(ctx context.Context) ([]ledger.Record, error) {
	var recs []ledger.Record
	_, err := s.do(ctx, http.MethodGet, localapi.LedgerPath, nil, &recs)
	return recs, err
}

// networkError tells "nothing answered" from a request never sent.
func networkError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, context.DeadlineExceeded)
}

var (
	_ reingest.LedgerReader = Server{}
	_ reingest.Ingester     = Server{}
)

func (s Server) Get(ctx context.Context, key ledger.Key) (ledger.Record, bool, error) {
	var rec ledger.Record
	code, err := s.do(ctx, http.MethodGet, localapi.LedgerURL(key), nil, &rec)
	if code == http.StatusNotFound {
		return ledger.Record{}, false, nil
	}
	if err != nil {
		return ledger.Record{}, false, fmt.Errorf("ledger record %s: %w", key, err)
	}
	return rec, true, nil
}

// Status fetches the status report of the last since, listing at most
// files. since and files must be positive: the server answers 400 to 0
// (alpipe status checks its flags first).
func (s Server) Status(ctx context.Context, since time.Duration, files int) (status.Report, error) {
	var rep status.Report
	code, err := s.do(ctx, http.MethodGet, localapi.StatusURL(since, files), nil, &rep)
	if code == http.StatusNotFound {
		return rep, fmt.Errorf("the server at %s has no %s endpoint: is it an older alpipe serve?", s.URL, localapi.StatusPath)
	}
	return rep, err
}
