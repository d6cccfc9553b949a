package functions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/objects/objname"
	"github.com/alpinashop/alpipe/internal/setup"
)

// FinalizedType is the Eventarc event for a new object generation.
const FinalizedType = "google.cloud.storage.object.v1.finalized"

// StorageObjectData is the part of Eventarc's StorageObjectData we use.
type StorageObjectData struct {
	Bucket     string  `json:"bucket"`
	Name       string  `json:"name"`
	Generation flexInt `json:"generation"`
	Size       flexInt `json:"size"`
	MD5Hash    string  `json:"md5Hash"`
}

// flexInt decodes an int64 sent as a JSON string (as GCS does) or number.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(b) >= 2 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer: %s", b)
	}
	*f = flexInt(n)
	return nil
}

func ingestCSV(ctx context.Context, _ *config.Ingest, app *setup.App) (Handler, error) {
	fn := IngestCSV{Service: app.Ingest, Log: app.Log}.Receive
	h, err := cloudEventHandler(ctx, fn)
	return Handler{Handler: h, Event: fn}, err
}

// cloudEventHandler serves fn as the functions framework serves a
// CloudEvent function (sdk-go's receive handler: an error answers 500, an
// HTTP result its code), behind the checks of what Eventarc sends.
func cloudEventHandler(ctx context.Context, fn func(context.Context, cloudevents.Event) error) (http.Handler, error) {
	p, err := cloudevents.NewHTTP()
	if err != nil {
		return nil, fmt.Errorf("cloudevents protocol: %w", err)
	}
	h, err := cloudevents.NewHTTPReceiveHandler(ctx, p, fn)
	if err != nil {
		return nil, fmt.Errorf("cloudevents handler: %w", err)
	}
	return cloudEventsOnly(bounded(maxFinalizeBody, h)), nil
}

// IngestCSV handles finalize events with the ingest service.
type IngestCSV struct {
	Service *ingest.Service
	Log     *slog.Logger
}

// Receive handles one finalize event. An event that can never be processed
// is logged and acknowledged; a transient failure returns an error so that
// Eventarc redelivers.
func (f IngestCSV) Receive(ctx context.Context, e cloudevents.Event) error {
	if e.Type() != FinalizedType {
		// A deletion or metadata change loads nothing, now or on a retry.
		f.Log.InfoContext(ctx, "event ignored: not an object finalize", "type", e.Type(), "id", e.ID(),
			"reason", "type "+e.Type()+" is not "+FinalizedType)
		return nil
	}
	obj, err := DecodeObject(e)
	if err != nil {
		// Redelivering a malformed event cannot help.
		f.Log.ErrorContext(ctx, "event dropped: undecodable StorageObjectData", "id", e.ID(), "error", err.Error())
		return nil
	}
	if err := objname.Object(obj.Name); err != nil {
		// Every attempt would fail the same way, and a 5xx would have
		// Eventarc retry it for 24 h. The reason is "permanent", as a file
		// failed for good logs it, so the ingest_failed metric counts it.
		f.Log.ErrorContext(ctx, "event refused: Cloud Storage cannot hold this object", "id", e.ID(),
			"object", obj.Key().String(), "reason", "permanent (not retried): "+err.Error())
		return nil
	}
	rec, err := f.Service.Ingest(ctx, obj)
	if errors.Is(err, ingest.ErrNotLanding) {
		return nil // logged by the service; no redelivery can make it one
	}
	if errors.Is(err, ingest.ErrBusy) {
		f.Log.InfoContext(ctx, "object busy; asking for redelivery", "object", obj.Key().String(), "held_by", rec.Key.String(), slog.String("error", err.Error()))
		return cloudevents.NewHTTPResult(http.StatusConflict, "%s", err.Error())
	}
	if err != nil {
		f.Log.WarnContext(ctx, "ingest failed; asking for redelivery", "object", obj.Key().String(), "error", err.Error())
	}
	return err
}

// DecodeObject reads the object generation an event is about.
func DecodeObject(e cloudevents.Event) (ingest.Object, error) {
	var d StorageObjectData
	if err := json.Unmarshal(e.Data(), &d); err != nil {
		return ingest.Object{}, fmt.Errorf("decode %s data: %w", e.Type(), err)
	}
	if d.Bucket == "" || d.Name == "" || d.Generation <= 0 {
		return ingest.Object{}, fmt.Errorf("event %s lacks bucket, name or generation", e.ID())
	}
	return ingest.Object{Bucket: d.Bucket, Name: d.Name, Generation: int64(d.Generation), MD5: d.MD5Hash, Size: int64(d.Size)}, nil
}
