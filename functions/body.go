package functions

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// Request body bounds, one per caller. A function answers 413 to a larger
// body without reading past the bound, so no caller can make an instance
// hold more than this per request.
const (
	maxFinalizeBody = 64 << 10 // a finalize event's StorageObjectData is a few KB
	// maxPushBody: a Pub/Sub message is at most 10 MB; base64 makes that
	// 13.4 MB and the push envelope (attributes, IDs) adds a little.
	maxPushBody = 14 << 20
	maxTickBody = 64 << 10 // Cloud Scheduler sends an empty JSON object
)

// bounded reads the request body whole, up to max bytes, before h sees it:
// a body declared or found larger is answered 413 with the bound named.
func bounded(max int64, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			tooLarge(w, max)
			return
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		switch {
		case err != nil:
			http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
			return
		case int64(len(b)) > max:
			tooLarge(w, max)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	})
}

// tooLarge answers 413 naming the bound. The rest of the body is not read:
// closing the connection is cheaper than draining it.
func tooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("request body larger than %d bytes", max), http.StatusRequestEntityTooLarge)
}

// jsonOnly refuses a request whose Content-Type is not application/json
// with 415. Pub/Sub push and Cloud Scheduler (terraform/scheduler.tf sets
// the header) send JSON; a web page cannot send JSON cross-origin without a
// preflight, so this keeps a browser's simple request (text/plain, a form)
// from ever reaching a function.
func jsonOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mediaType(r) != "application/json" {
			unsupported(w, r, "want Content-Type: application/json")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// cloudEventsOnly refuses with 415 anything but what Eventarc sends: a
// binary-mode CloudEvent (its required attributes as Ce- headers, the data
// as JSON) or a structured one (application/cloudevents+json). The
// framework would also accept a legacy background-event body of any
// Content-Type, which is how a browser's text/plain POST reached IngestCSV.
func cloudEventsOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mediaType(r) {
		case "application/cloudevents+json":
		case "application/json":
			for _, k := range []string{"Ce-Id", "Ce-Type", "Ce-Source", "Ce-Specversion"} {
				if r.Header.Get(k) == "" {
					unsupported(w, r, "a binary-mode CloudEvent needs the "+k+" header")
					return
				}
			}
		default:
			unsupported(w, r, "want a CloudEvent: Ce- headers with Content-Type: application/json, or Content-Type: application/cloudevents+json")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func unsupported(w http.ResponseWriter, r *http.Request, want string) {
	http.Error(w, fmt.Sprintf("unsupported request (Content-Type %q): %s", r.Header.Get("Content-Type"), want), http.StatusUnsupportedMediaType)
}
