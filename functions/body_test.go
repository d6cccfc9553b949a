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
// background-event body. A body over a function's bound (size set) is
// answered 413 without reading it: not at all when Content-Length declares
// it, and no further than the bound when it is chunked.
func TestFunctionsAcceptOnlyTheirCallers(t *testing.T) {
	// Every function, as cmd/server serves them without FUNCTION_TARGET.
	now := time.Now()
	p := testProcess(t, &now, nil, Names...)
	h := http.NewServeMux()
	if err := Mount(h, p.Handlers, "", 0, p.App.Log); err != nil {
		t.Fatal(err)
	}
	ingest, orders, tick, sweep := "/IngestCSV", "/AggregateOrders", "/AdvanceWatermark", "/SweepLanding"
	tests := []struct {
		name, path string
		header     http.Header
		body       string
		size       int64 // a "{}" padded with spaces to size bytes instead of body
		chunked    bool
		want       int
	}{
		{name: "ingest: binary CloudEvent, as Eventarc sends it", path: ingest, header: finalizeHeaders,
			body: finalizeData, want: 200},
		{name: "ingest: structured CloudEvent", path: ingest, header: contentType("application/cloudevents+json"),
			body: `{"specversion":"1.0","id":"e-2","type":"` + FinalizedType +
				`","source":"//storage.googleapis.com/x","datacontenttype":"application/json",` +
				`"data":` + finalizeData + `}`,
			want: 200},
		{name: "ingest: legacy background event as text/plain", path: ingest, header: contentType("text/plain"),
			body: `{"context":{"eventId":"1","eventType":"google.storage.object.finalize",` +
				`"resource":{"service":"storage.googleapis.com",` +
				`"name":"projects/_/buckets/b/objects/o","type":"storage#object"}},` +
				`"data":` + finalizeData + `}`,
			want: 415},
		{name: "ingest: legacy background event as JSON", path: ingest, header: jsonHeader,
			body: `{"context":{"eventId":"1"},"data":` + finalizeData + `}`, want: 415},
		{name: "ingest: JSON without Ce-Source", path: ingest,
			header: headers(finalizeHeaders, "Ce-Source", "", ""), body: finalizeData, want: 415},
		{name: "ingest: Ce- headers with text/plain data", path: ingest,
			header: headers(finalizeHeaders, "", "Content-Type", "text/plain"), body: finalizeData, want: 415},
		{name: "orders: JSON push body", path: orders, header: jsonHeader, body: `{"pedido_id":"P-X"}`, want: 204},
		{name: "orders: text/plain", path: orders, header: contentType("text/plain;charset=UTF-8"),
			body: `{"message":{}}`, want: 415},
		{name: "orders: form", path: orders, header: contentType("application/x-www-form-urlencoded"),
			body: `a=b`, want: 415},
		{name: "orders: no Content-Type", path: orders, header: http.Header{}, body: `{}`, want: 415},
		{name: "tick: JSON, as terraform/scheduler.tf sends it", path: tick, header: jsonHeader,
			body: `{}`, want: 200},
		{name: "tick: text/plain", path: tick, header: contentType("text/plain"), want: 415},
		{name: "sweep: JSON", path: sweep, header: jsonHeader, body: `{}`, want: 200},
		{name: "sweep: multipart form", path: sweep, header: contentType("multipart/form-data; boundary=x"),
			want: 415},
		{name: "finalize event over 64 KiB, declared", path: ingest, header: finalizeHeaders,
			size: maxFinalizeBody + 1, want: 413},
		{name: "finalize event over 64 KiB, chunked", path: ingest, header: finalizeHeaders,
			size: 400 << 20, chunked: true, want: 413},
		{name: "push over 14 MiB, declared", path: orders, header: jsonHeader,
			size: maxPushBody + 1, want: 413},
		{name: "push over 14 MiB, chunked", path: orders, header: jsonHeader,
			size: 400 << 20, chunked: true, want: 413},
		{name: "tick over 64 KiB, declared", path: tick, header: jsonHeader,
			size: maxTickBody + 1, want: 413},
		{name: "tick over 64 KiB, chunked", path: tick, header: jsonHeader,
			size: maxTickBody + 1, chunked: true, want: 413},
		{name: "sweep over 64 KiB, declared", path: sweep, header: jsonHeader,
			size: 1 << 30, want: 413},
		{name: "tick of exactly 64 KiB", path: tick, header: jsonHeader,
			size: maxTickBody, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingReader{r: strings.NewReader(tt.body)}
			if tt.size > 0 {
				body.r = io.MultiReader(strings.NewReader("{}"), io.LimitReader(spaces{}, tt.size-2))
			}
			req := httptest.NewRequest(http.MethodPost, tt.path, body)
			req.Header = tt.header.Clone()
			req.ContentLength = max(tt.size, int64(len(tt.body)))
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
			limit := map[string]int64{ingest: maxFinalizeBody, orders: maxPushBody}[tt.path]
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
