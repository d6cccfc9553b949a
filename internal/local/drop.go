package local

import (
	"context"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/objects"
)

// The file-drop client lives in package client, so that client commands do
// not link the server; these forward to it for the demo and the tests that
// drive a server they started.

// Upload writes file to bucket/object on the server's fake Cloud Storage.
func Upload(ctx context.Context, server, bucket, object, file string) (objects.Attrs, error) {
	return client.Server{URL: server}.Upload(ctx, bucket, object, file)
}

// FinalizeEvent: see client.FinalizeEvent.
func FinalizeEvent(a objects.Attrs, now time.Time) (cloudevents.Event, error) {
	return client.FinalizeEvent(a, now)
}

// Deliver sends e to the function at url as Eventarc does.
func Deliver(ctx context.Context, url string, e cloudevents.Event) (int, error) {
	return client.Deliver(ctx, url, e)
}

// Drop uploads file to the landing bucket and ingests it.
func Drop(ctx context.Context, server, object, file string) (ledger.Record, error) {
	return client.Server{URL: server}.Drop(ctx, object, file)
}

// Notify delivers the finalize event of an existing generation.
func Notify(ctx context.Context, server string, attrs objects.Attrs) (ledger.Record, error) {
	return client.Server{URL: server}.Notify(ctx, attrs)
}

// FetchRecord reads one ledger record from the server.
func FetchRecord(ctx context.Context, server string, key ledger.Key) (ledger.Record, error) {
	return client.Server{URL: server}.FetchRecord(ctx, key)
}
