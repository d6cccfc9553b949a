package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
	"github.com/alpinashop/alpipe/internal/objects"
)

// TestUploadRefusesBadNames: a name that Cloud Storage or the local folder
// layout refuses is refused before any request, with the rule. The server
// URL answers nothing, so reaching the network would fail differently.
func TestUploadRefusesBadNames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.csv")
	if err := os.WriteFile(file, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dead := client.Server{URL: "http://127.0.0.1:1"}
	for _, tc := range []struct {
		name, bucket, object, want string
	}{
		{name: "newline", bucket: localapi.LandingBucket, object: "exportaciones/a\nb.csv", want: "control character U+000A"},
		{name: "carriage return", bucket: localapi.LandingBucket, object: "exportaciones/a\r.csv", want: "U+000D"},
		{name: "parent segment", bucket: localapi.LandingBucket, object: "../alpinashop-cuarentena/x.csv", want: "empty, . or .. segment"},
		{name: "folder placeholder", bucket: localapi.LandingBucket, object: "exportaciones/", want: "ends in /"},
		{name: "empty", bucket: localapi.LandingBucket, object: "", want: "empty"},
		{name: "too long", bucket: localapi.LandingBucket, object: strings.Repeat("a", 1025), want: "more than Cloud Storage's 1024"},
		{name: "bucket with a path", bucket: "../alpinashop-catalogo", object: "x.csv", want: "bucket name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dead.Upload(context.Background(), tc.bucket, tc.object, file)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, client.ErrUnreachable) {
				t.Errorf("Upload = %v, want a refusal naming %q before any request", err, tc.want)
			}
		})
	}
}

// TestDeliverFailsBeforeHTTP: an event that never reaches the function is
// an error, not a silent success (drop used to print "GET /_local/ledger:
// HTTP 404" after an event with a newline in its subject never left); drop's
// Ingest then says why, and reports only a dead server as one.
func TestDeliverFailsBeforeHTTP(t *testing.T) {
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(fn.Close)
	for _, tc := range []struct {
		name, url, object string
		wantStatus        int
		wantErr           string // Deliver's; "" is no error
		wantIngest        string // Ingest's; "" skips it
		unreachable       bool   // Ingest's error is ErrUnreachable
	}{
		{name: "delivered", url: fn.URL, object: "exportaciones/x.csv", wantStatus: 200},
		{name: "newline in the subject", url: fn.URL, object: "exportaciones/a\nb.csv", wantErr: "invalid header field value", wantIngest: "event not delivered"},
		{name: "nothing listening", url: "http://127.0.0.1:1", object: "exportaciones/x.csv", wantErr: "connection refused",
			wantIngest: "is `alpipe serve` running", unreachable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := objects.Attrs{Bucket: localapi.LandingBucket, Name: tc.object, Generation: 1}
			e, err := client.FinalizeEvent(attrs, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			status, err := client.Deliver(context.Background(), tc.url, e)
			if status != tc.wantStatus || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Deliver = %d, %v; want %d and an error containing %q", status, err, tc.wantStatus, tc.wantErr)
			}
			if tc.wantIngest == "" {
				return
			}
			_, err = client.Server{URL: tc.url}.Ingest(context.Background(), attrs)
			if err == nil || !strings.Contains(err.Error(), tc.wantIngest) || errors.Is(err, client.ErrUnreachable) != tc.unreachable {
				t.Errorf("Ingest = %v, want an error containing %q (unreachable %v)", err, tc.wantIngest, tc.unreachable)
			}
		})
	}
}
