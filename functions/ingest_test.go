package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ingest"
)

func TestDecodeObject(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		want    ingest.Object
		wantErr bool
	}{
		{name: "int64 fields as JSON strings, as Eventarc sends them",
			data: `{"bucket":"alpinashop-catalogo","name":"exportaciones/2026/03/14/p.csv","generation":"1710400000000001","size":"512","md5Hash":"q1w2e3==","metageneration":"1"}`,
			want: ingest.Object{Bucket: "alpinashop-catalogo", Name: "exportaciones/2026/03/14/p.csv", Generation: 1710400000000001, Size: 512, MD5: "q1w2e3=="}},
		{name: "int64 fields as numbers", data: `{"bucket":"b","name":"o.csv","generation":7,"size":1}`, want: ingest.Object{Bucket: "b", Name: "o.csv", Generation: 7, Size: 1}},
		{name: "composite object without md5", data: `{"bucket":"b","name":"o.csv","generation":"7","crc32c":"AAAAAA=="}`, want: ingest.Object{Bucket: "b", Name: "o.csv", Generation: 7}},
		{name: "missing generation", data: `{"bucket":"b","name":"o.csv"}`, wantErr: true},
		{name: "generation not a number", data: `{"bucket":"b","name":"o.csv","generation":"abc"}`, wantErr: true},
		{name: "not JSON", data: `<xml/>`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := cloudevents.NewEvent()
			e.SetID("1")
			e.SetType(FinalizedType)
			e.DataEncoded = []byte(tt.data)
			got, err := DecodeObject(e)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodeObject error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" && !tt.wantErr {
				t.Errorf("object (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIngestCSVAcknowledgesWhatNoRetryCanProcess: an event that can never be
// processed is answered 2xx, so that Eventarc does not retry it for 24 h,
// and logged with its reason: a name Cloud Storage cannot hold (it would
// fail the same way on every attempt) at ERROR with a "permanent" reason,
// as a file failed for good is (the ingest_failed metric counts it), and an
// event of another type than finalize at INFO.
func TestIngestCSVAcknowledgesWhatNoRetryCanProcess(t *testing.T) {
	now := time.Now()
	p := testProcess(t, &now, nil, IngestCSVName)
	var logs bytes.Buffer
	h, err := cloudEventHandler(context.Background(), IngestCSV{Service: p.App.Ingest, Log: slog.New(slog.NewJSONHandler(&logs, nil))}.Receive)
	if err != nil {
		t.Fatal(err)
	}
	data := func(name string) string {
		return `{"bucket":"alpinashop-catalogo","name":"` + name + `","generation":"1"}`
	}
	type line struct {
		Level  string `json:"level"`
		Msg    string `json:"msg"`
		Reason string `json:"reason"`
	}
	tests := []struct {
		name   string
		header http.Header
		body   string
		want   line // the event's log line; its reason is matched as a prefix
	}{
		{name: "NUL in the object name", header: finalizeHeaders, body: data(`exportaciones/2026/03/14/pe\u0000didos.csv`),
			want: line{Level: "ERROR", Msg: "event refused: Cloud Storage cannot hold this object", Reason: "permanent (not retried): object name \"exportaciones/2026/03/14/pe\\x00didos.csv\" has the control character U+0000"}},
		{name: "object deleted, binary mode", header: headers(finalizeHeaders, "", "Ce-Type", "google.cloud.storage.object.v1.deleted"), body: data("exportaciones/2026/03/14/pedidos.csv"),
			want: line{Level: "INFO", Msg: "event ignored: not an object finalize", Reason: "type google.cloud.storage.object.v1.deleted"}},
		{name: "object deleted, structured mode", header: http.Header{"Content-Type": {"application/cloudevents+json"}},
			body: `{"specversion":"1.0","id":"e-2","source":"//storage.googleapis.com/projects/_/buckets/alpinashop-catalogo","type":"google.cloud.storage.object.v1.deleted","datacontenttype":"application/json","data":` + data("exportaciones/2026/03/14/pedidos.csv") + `}`,
			want: line{Level: "INFO", Msg: "event ignored: not an object finalize", Reason: "type google.cloud.storage.object.v1.deleted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			req.Header = tt.header.Clone()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code/100 != 2 {
				t.Errorf("status %d %q, want 2xx: no retry can process this event", rec.Code, rec.Body.String())
			}
			var got line
			for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if err := json.Unmarshal([]byte(l), &got); err == nil && strings.HasPrefix(got.Msg, "event") {
					break
				}
				got = line{Msg: l}
			}
			if strings.HasPrefix(got.Reason, tt.want.Reason) {
				got.Reason = tt.want.Reason
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
		})
	}
}
