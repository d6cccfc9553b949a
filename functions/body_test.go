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

// spaces is an endless body of JSON whitespace.
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
	p := testProcess(t, &now, nil, Names...)
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

// headers is h without drop and with key set to value.
func headers(h http.Header, drop, key, value string) http.Header {
	out := h.Clone()
	out.Del(drop)
	if key != "" {
		out.Set(key, value)
	}
	return out
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func contentType(t string) http.Header { return http.Header{"Content-Type": {t}} }

// TestFunctionsAcceptOnlyTheirCallers: each function answers what its real
// caller sends (Eventarc's CloudEvents, Pub/Sub's and Cloud Scheduler's
// JSON) and refuses with 415 what a web page can send without a preflight
// (text/plain, a form, no type) and, for IngestCSV, the framework's legacy
// background-event body.
func TestFunctionsAcceptOnlyTheirCallers(t *testing.T) {
	h := allFunctions(t)
	tests := []struct {
		name, path string
		header     http.Header
		body       string
		want       int
	}{
		{"ingest: binary CloudEvent, as Eventarc sends it", "/IngestCSV", finalizeHeaders, finalizeData, 200},
		{"ingest: structured CloudEvent", "/IngestCSV", contentType("application/cloudevents+json"),
			`{"specversion":"1.0","id":"e-2","type":"` + FinalizedType + `","source":"//storage.googleapis.com/x","datacontenttype":"application/json","data":` + finalizeData + `}`, 200},
		{"ingest: legacy background event as text/plain", "/IngestCSV", contentType("text/plain"),
			`{"context":{"eventId":"1","eventType":"google.storage.object.finalize","resource":{"service":"storage.googleapis.com","name":"projects/_/buckets/b/objects/o","type":"storage#object"}},"data":` + finalizeData + `}`, 415},
		{"ingest: legacy background event as JSON", "/IngestCSV", jsonHeader, `{"context":{"eventId":"1"},"data":` + finalizeData + `}`, 415},
		{"ingest: JSON without Ce-Source", "/IngestCSV", headers(finalizeHeaders, "Ce-Source", "", ""), finalizeData, 415},
		{"ingest: Ce- headers with text/plain data", "/IngestCSV", headers(finalizeHeaders, "", "Content-Type", "text/plain"), finalizeData, 415},
		{"orders: JSON push body", "/AggregateOrders", jsonHeader, `{"pedido_id":"P-X"}`, 204},
		{"orders: text/plain", "/AggregateOrders", contentType("text/plain;charset=UTF-8"), `{"message":{}}`, 415},
		{"orders: form", "/AggregateOrders", contentType("application/x-www-form-urlencoded"), `a=b`, 415},
		{"orders: no Content-Type", "/AggregateOrders", http.Header{}, `{}`, 415},
		{"tick: JSON, as terraform/scheduler.tf sends it", "/AdvanceWatermark", jsonHeader, `{}`, 200},
		{"tick: text/plain", "/AdvanceWatermark", contentType("text/plain"), ``, 415},
		{"sweep: JSON", "/SweepLanding", jsonHeader, `{}`, 200},
		{"sweep: multipart form", "/SweepLanding", contentType("multipart/form-data; boundary=x"), ``, 415},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
		req.Header = tt.header.Clone()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: status %d (%s), want %d", tt.name, rec.Code, strings.TrimSpace(rec.Body.String()), tt.want)
		}
	}
}

// TestFunctionBodiesAreBounded: a body over a function's bound is answered
// 413 without reading it: not at all when Content-Length declares it, and
// no further than the bound when it is chunked.
func TestFunctionBodiesAreBounded(t *testing.T) {
	h := allFunctions(t)
	tests := []struct {
		name, path string
		header     http.Header
		size       int64
		chunked    bool
		want       int
	}{
		{name: "finalize event over 64 KiB, declared", path: "/IngestCSV", header: finalizeHeaders,
			size: maxFinalizeBody + 1, want: 413},
		{name: "finalize event over 64 KiB, chunked", path: "/IngestCSV", header: finalizeHeaders,
			size: 400 << 20, chunked: true, want: 413},
		{name: "push over 14 MiB, declared", path: "/AggregateOrders", header: jsonHeader,
			size: maxPushBody + 1, want: 413},
		{name: "push over 14 MiB, chunked", path: "/AggregateOrders", header: jsonHeader,
			size: 400 << 20, chunked: true, want: 413},
		{name: "tick over 64 KiB, declared", path: "/AdvanceWatermark", header: jsonHeader,
			size: maxTickBody + 1, want: 413},
		{name: "tick over 64 KiB, chunked", path: "/AdvanceWatermark", header: jsonHeader,
			size: maxTickBody + 1, chunked: true, want: 413},
		{name: "sweep over 64 KiB, declared", path: "/SweepLanding", header: jsonHeader,
			size: 1 << 30, want: 413},
		{name: "tick of exactly 64 KiB", path: "/AdvanceWatermark", header: jsonHeader,
			size: maxTickBody, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingReader{r: io.MultiReader(strings.NewReader("{}"), io.LimitReader(spaces{}, tt.size-2))}
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
			limit = max(limit, maxTickBody)
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
