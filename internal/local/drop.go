package local

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	"github.com/alpinashop/alpipe/functions"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
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

// Upload writes file to bucket/object on the server's fake Cloud Storage,
// streaming, and returns the new generation's attributes.
func Upload(ctx context.Context, server, bucket, object, file string) (objects.Attrs, error) {
	f, err := os.Open(file)
	if err != nil {
		return objects.Attrs{}, err
	}
	defer f.Close()
	gcs, closeFn, err := Storage(ctx, server)
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

// Storage returns a Cloud Storage adapter talking to the server's fake, the
// way any other process would: through STORAGE_EMULATOR_HOST.
func Storage(ctx context.Context, server string) (*objects.GCS, func(), error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, nil, fmt.Errorf("server URL %q: %w", server, err)
	}
	if err := os.Setenv("STORAGE_EMULATOR_HOST", u.Host); err != nil {
		return nil, nil, err
	}
	client, err := objects.NewClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	g, err := objects.NewGCS(client)
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return g, func() { client.Close() }, nil
}

// FinalizeEvent builds the CloudEvent Eventarc sends for a new generation:
// binary mode, StorageObjectData with its int64 fields as JSON strings.
func FinalizeEvent(a objects.Attrs, now time.Time) (cloudevents.Event, error) {
	e := cloudevents.NewEvent()
	e.SetID(randomID())
	e.SetType(functions.FinalizedType)
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
	if err := e.SetData(cloudevents.ApplicationJSON, data); err != nil {
		return e, err
	}
	return e, nil
}

// ErrNotAcknowledged is returned when the function answered non-2xx.
var ErrNotAcknowledged = errors.New("event not acknowledged")

// Deliver sends e to the function at url as Eventarc does and returns the
// HTTP status.
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
		return hr.StatusCode, fmt.Errorf("%w: HTTP %d: %v", ErrNotAcknowledged, hr.StatusCode, res)
	}
	if cloudevents.IsUndelivered(res) {
		return 0, fmt.Errorf("deliver to %s: %w", url, res)
	}
	return 0, nil
}

// Drop uploads file to the landing bucket, delivers its finalize event to
// IngestCSV and waits for the ledger to hold the final outcome.
func Drop(ctx context.Context, server, object, file string) (ledger.Record, error) {
	attrs, err := Upload(ctx, server, LandingBucket, object, file)
	if err != nil {
		return ledger.Record{}, err
	}
	return Notify(ctx, server, attrs)
}

// Notify delivers the finalize event of an existing generation and waits for
// its outcome: a 409 (another attempt holds it) is retried as Eventarc would.
func Notify(ctx context.Context, server string, attrs objects.Attrs) (ledger.Record, error) {
	e, err := FinalizeEvent(attrs, time.Now())
	if err != nil {
		return ledger.Record{}, err
	}
	key := ledger.Key{Bucket: attrs.Bucket, Object: attrs.Name, Generation: attrs.Generation}
	for delay := 100 * time.Millisecond; ; delay *= 2 {
		status, err := Deliver(ctx, server+"/"+functions.IngestCSVName, e)
		if err == nil {
			return FetchRecord(ctx, server, key)
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

// FetchRecord reads one ledger record from the server.
func FetchRecord(ctx context.Context, server string, key ledger.Key) (ledger.Record, error) {
	q := url.Values{"bucket": {key.Bucket}, "object": {key.Object}, "generation": {strconv.FormatInt(key.Generation, 10)}}
	var rec ledger.Record
	err := getJSON(ctx, server+AdminPrefix+"ledger?"+q.Encode(), &rec)
	return rec, err
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	return doJSON(req, v)
}

func doJSON(req *http.Request, v any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("is `alpipe serve` running? %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s %s: HTTP %d: %s", req.Method, req.URL.Path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
