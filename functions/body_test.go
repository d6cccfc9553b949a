package functions

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// countingReader is a request body that counts what the handler read.
type countingReader struct {
	r    io.Reader
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

// filler is n bytes of JSON whitespace.
func filler(n int64) io.Reader { return io.LimitReader(spaces{}, n) }

type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// allFunctions serves every function as cmd/server does without
// FUNCTION_TARGET.
func allFunctions(t *testing.T) http.Handler {
	t.Helper()
	now := time.Now()
	_, p := testProcess(t, &now, nil, Names...)
	mux := http.NewServeMux()
	if err := Mount(mux, p.Handlers, "", 0, p.App.Log); err != nil {
		t.Fatal(err)
	}
	return mux
}

var finalizeHeaders = http.Header{
	"Content-Type":   {"application/json; charset=utf-8"},
	"Ce-Id":          {"e-1"},
	"Ce-Type":        {FinalizedType},
	"Ce-Source":      {"//storage.googleapis.com/projects/_/buckets/alpinashop-cuarentena"},
	"Ce-Specversion": {"1.0"},
}

// A finalize event about a quarantine object: acknowledged without loading.
const finalizeData = `{"bucket":"alpinashop-cuarentena","name":"cuarentena/x.csv","generation":"1"}`

func headers(h http.Header, drop string, set ...string) http.Header {
	out := h.Clone()
	out.Del(drop)
	for i := 0; i+1 < len(set); i += 2 {
		out.Set(set[i], set[i+1])
	}
	return out
}

// TestFunctionsAcceptOnlyTheirCallers: each function answers what its real
// caller sends (Eventarc's CloudEvents, Pub/Sub's and Cloud Scheduler's
// JSON) and refuses with 415 what a web page can send without a preflight
// (text/plain, a form, no type) and, for IngestCSV, the framework's legacy
// background-event body.
func TestFunctionsAcceptOnlyTheirCallers(t *testing.T) {
	h := allFunctions(t)
	tests := []struct {
		name   string
		path   string
		header http.Header
		body   string
		want   int
	}{
		{name: "ingest: binary CloudEvent, as Eventarc sends it", path: "/IngestCSV", header: finalizeHeaders, body: finalizeData, want: 200},
		{name: "ingest: structured CloudEvent", path: "/IngestCSV", header: http.Header{"Content-Type": {"application/cloudevents+json"}},
			body: `{"specversion":"1.0","id":"e-2","type":"` + FinalizedType + `","source":"//storage.googleapis.com/x","datacontenttype":"application/json","data":` + finalizeData + `}`, want: 200},
		{name: "ingest: legacy background event as text/plain", path: "/IngestCSV", header: http.Header{"Content-Type": {"text/plain"}},
			body: `{"context":{"eventId":"1","eventType":"google.storage.object.finalize","resource":{"service":"storage.googleapis.com","name":"projects/_/buckets/b/objects/o","type":"storage#object"}},"data":` + finalizeData + `}`, want: 415},
		{name: "ingest: legacy background event as JSON", path: "/IngestCSV", header: http.Header{"Content-Type": {"application/json"}},
			body: `{"context":{"eventId":"1"},"data":` + finalizeData + `}`, want: 415},
		{name: "ingest: JSON without Ce-Source", path: "/IngestCSV", header: headers(finalizeHeaders, "Ce-Source"), body: finalizeData, want: 415},
		{name: "ingest: Ce- headers with text/plain data", path: "/IngestCSV", header: headers(finalizeHeaders, "", "Content-Type", "text/plain"), body: finalizeData, want: 415},
		{name: "orders: JSON push body", path: "/AggregateOrders", header: http.Header{"Content-Type": {"application/json"}}, body: `{"pedido_id":"P-X"}`, want: 204},
		{name: "orders: text/plain", path: "/AggregateOrders", header: http.Header{"Content-Type": {"text/plain;charset=UTF-8"}}, body: `{"message":{}}`, want: 415},
		{name: "orders: form", path: "/AggregateOrders", header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, body: `a=b`, want: 415},
		{name: "orders: no Content-Type", path: "/AggregateOrders", header: http.Header{}, body: `{}`, want: 415},
		{name: "tick: JSON, as terraform/scheduler.tf sends it", path: "/AdvanceWatermark", header: http.Header{"Content-Type": {"application/json"}}, body: `{}`, want: 200},
		{name: "tick: text/plain", path: "/AdvanceWatermark", header: http.Header{"Content-Type": {"text/plain"}}, body: ``, want: 415},
		{name: "sweep: JSON", path: "/SweepLanding", header: http.Header{"Content-Type": {"application/json"}}, body: `{}`, want: 200},
		{name: "sweep: multipart form", path: "/SweepLanding", header: http.Header{"Content-Type": {"multipart/form-data; boundary=x"}}, body: ``, want: 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
			req.Header = tt.header.Clone()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status %d (%s), want %d", rec.Code, strings.TrimSpace(rec.Body.String()), tt.want)
			}
		})
	}
}

// TestFunctionBodiesAreBounded: a body over a function's bound is answered
// 413 without reading it: not at all when Content-Length declares it, and
// no further than the bound when it is chunked.
func TestFunctionBodiesAreBounded(t *testing.T) {
	h := allFunctions(t)
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name    string
		path    string
		header  http.Header
		size    int64
		chunked bool
		want    int
	}{
		{name: "finalize event over 64 KiB, declared", path: "/IngestCSV", header: finalizeHeaders, size: maxFinalizeBody + 1, want: 413},
		{name: "finalize event over 64 KiB, chunked", path: "/IngestCSV", header: finalizeHeaders, size: 400 << 20, chunked: true, want: 413},
		{name: "push over 14 MiB, declared", path: "/AggregateOrders", header: json, size: maxPushBody + 1, want: 413},
		{name: "push over 14 MiB, chunked", path: "/AggregateOrders", header: json, size: 400 << 20, chunked: true, want: 413},
		{name: "tick over 64 KiB, declared", path: "/AdvanceWatermark", header: json, size: maxTickBody + 1, want: 413},
		{name: "tick over 64 KiB, chunked", path: "/AdvanceWatermark", header: json, size: maxTickBody + 1, chunked: true, want: 413},
		{name: "sweep over 64 KiB, declared", path: "/SweepLanding", header: json, size: 1 << 30, want: 413},
		{name: "tick of exactly 64 KiB", path: "/AdvanceWatermark", header: json, size: maxTickBody, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingReader{r: io.MultiReader(strings.NewReader("{}"), filler(tt.size-2))}
			req := httptest.NewRequest(http.MethodPost, tt.path, body)
			req.Header = tt.header.Clone()
			req.ContentLength = tt.size
			if tt.chunked {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d (%.200s), want %d", rec.Code, strings.TrimSpace(rec.Body.String()), tt.want)
			}
			if tt.want != 413 {
				return
			}
			limit := map[string]int64{"/IngestCSV": maxFinalizeBody, "/AggregateOrders": maxPushBody}[tt.path]
			if limit == 0 {
				limit = maxTickBody
			}
			switch {
			case !tt.chunked && body.read != 0:
				t.Errorf("read %d bytes of a body declared too large, want 0", body.read)
			case tt.chunked && body.read > limit+1:
				t.Errorf("read %d bytes, want at most the bound + 1 (%d)", body.read, limit+1)
			}
			if !strings.Contains(rec.Body.String(), "larger than") {
				t.Errorf("answer %q does not name the bound", rec.Body.String())
			}
		})
	}
}
