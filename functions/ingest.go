package functions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/GoogleCloudPlatform/functions-framework-go/functions"
	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/alpinashop/alpipe/internal/ingest"
)

// FinalizedType is the Eventarc event for a new object generation.
const FinalizedType = "google.cloud.storage.object.v1.finalized"

func init() {
	functions.CloudEvent(IngestCSVName, IngestCSV)
}

// StorageObjectData is the part of Eventarc's StorageObjectData we use. The
// int64 fields arrive as JSON strings.
type StorageObjectData struct {
	Bucket     string   `json:"bucket"`
	Name       string   `json:"name"`
	Generation flexInt  `json:"generation"`
	Size       flexInt  `json:"size"`
	MD5Hash    string   `json:"md5Hash"`
	CRC32C     string   `json:"crc32c,omitempty"`
	Metagen    *flexInt `json:"metageneration,omitempty"`
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

// IngestCSV handles a finalize event. Permanent problems (an event that can
// never be processed) are logged and acknowledged; transient ones return an
// error so that Eventarc redelivers.
func IngestCSV(ctx context.Context, e cloudevents.Event) error {
	app, err := current()
	if err != nil {
		return err
	}
	svc, err := app.IngestService()
	if err != nil {
		return err
	}
	log := app.Logger()
	if e.Type() != FinalizedType {
		log.InfoContext(ctx, "event ignored: not an object finalize", "type", e.Type(), "id", e.ID())
		return nil
	}
	obj, err := DecodeObject(e)
	if err != nil {
		// Redelivering a malformed event cannot help.
		log.ErrorContext(ctx, "event dropped: undecodable StorageObjectData", "id", e.ID(), "error", err.Error())
		return nil
	}
	rec, err := svc.Ingest(ctx, obj)
	if errors.Is(err, ingest.ErrNotLanding) {
		return nil // logged by the service; no redelivery can make it one
	}
	if errors.Is(err, ingest.ErrBusy) {
		log.InfoContext(ctx, "object busy; asking for redelivery", "object", obj.Key().String(), "held_by", rec.Key.String(), slog.String("error", err.Error()))
		return cloudevents.NewHTTPResult(http.StatusConflict, "%s", err.Error())
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
