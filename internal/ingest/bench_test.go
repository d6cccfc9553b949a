package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"google.golang.org/api/option"

	"github.com/alpinashop/alpipe/internal/contract/contracttest"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/ingest/ingesttest"
	"github.com/alpinashop/alpipe/internal/ledger"
	"github.com/alpinashop/alpipe/internal/logging"
	"github.com/alpinashop/alpipe/internal/objects"
	bq "github.com/alpinashop/alpipe/internal/warehouse/bigquery"
	"github.com/alpinashop/alpipe/internal/warehouse/bigquery/bqfake"
)

// BenchmarkIngestBigQuery is IngestCSV's own CPU per file on the BigQuery
// adapter (on bqfake), without the network stages that
// scripts/bench-ingest-stack.sh measures: the file is read from memory,
// staging and quarantine are counted and dropped, the refresh is skipped.
// rows/CPU-s is the process's CPU (getrusage) over the rows.
//
//	go test -run XXX -bench IngestBigQuery -benchtime 3x -cpu 1 -cpuprofile /tmp/ingest.prof ./internal/ingest/
func BenchmarkIngestBigQuery(b *testing.B) {
	const rows = 200_000
	// One bad row (two fields), as in the stack measurement.
	csv := append(contracttest.OrderLines(rows-1), "P-1,2\r\n"...)
	ctx := context.Background()
	parts := ingesttest.NewParts(b, ingesttest.Landing, ingesttest.Quarantine)
	staging := &countingStaging{}
	fake, err := bqfake.New(bqfake.Options{
		Project: "bench", Dataset: "alpinashop_analitica",
		Staged: func(context.Context, string, string) (io.ReadCloser, error) {
			return io.NopCloser(strings.NewReader("")), nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(fake.Handler())
	b.Cleanup(srv.Close)
	client, err := bigquery.NewClient(ctx, "bench", option.WithEndpoint(srv.URL+"/bigquery/v2/"),
		option.WithoutAuthentication(), option.WithHTTPClient(srv.Client()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Close() })
	wh, err := bq.New(client, staging, bq.Options{Project: "bench", Dataset: "alpinashop_analitica", Location: "EU",
		StagingBucket: "staging", StagingPrefix: "staging/", PollInterval: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	objs := &memObjects{body: csv}
	svc, err := ingest.New(objs, parts.Ledger, noRefresh{wh}, parts.Feeds,
		ingest.Config{QuarantineBucket: ingesttest.Quarantine, QuarantinePrefix: "cuarentena/", LandingBucket: ingesttest.Landing},
		time.Now, logging.Discard())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(csv)))
	b.ReportAllocs()
	cpu0 := cpuTime(b)
	b.ResetTimer()
	n := 0
	for i := range b.N {
		obj := ingest.Object{Bucket: ingesttest.Landing, Name: "exportaciones/2026/03/14/pedidos.csv",
			Generation: int64(1000 + i), MD5: fmt.Sprintf("bench-%d", i), Size: int64(len(csv))}
		rec, err := svc.Ingest(ctx, obj)
		if err != nil {
			b.Fatal(err)
		}
		if rec.State != ledger.Done || rec.Counts.Loaded != rows-1 || rec.Counts.Quarantined != 1 {
			b.Fatalf("ingest: %s %+v %s", rec.State, rec.Counts, rec.Reason)
		}
		n += int(rec.Counts.Read)
	}
	b.StopTimer()
	cpu := cpuTime(b) - cpu0
	b.ReportMetric(float64(n)/cpu.Seconds(), "rows/CPU-s")
	b.ReportMetric(float64(staging.bytes)/float64(n), "staged-B/row")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memObjects serves the landed file from memory and drops what is written.
type memObjects struct{ body []byte }

func (m *memObjects) Open(context.Context, string, string, int64) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(m.body)), nil
}

func (m *memObjects) Create(context.Context, string, string, string, map[string]string) objects.Writer {
	return &countingWriter{}
}

type countingStaging struct{ bytes int64 }

func (s *countingStaging) Create(context.Context, string, string, string, map[string]string) objects.Writer {
	return &countingWriter{total: &s.bytes}
}

func (s *countingStaging) Delete(context.Context, string, string) error { return nil }

type countingWriter struct{ total *int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.total != nil {
		*w.total += int64(len(p))
	}
	return len(p), nil
}
func (w *countingWriter) Close() error         { return nil }
func (w *countingWriter) Abort()               {}
func (w *countingWriter) Attrs() objects.Attrs { return objects.Attrs{Generation: 1} }

// noRefresh leaves out the daily refresh, a query job of the warehouse's.
type noRefresh struct{ *bq.Warehouse }

func (noRefresh) RefreshDaily(context.Context, string, []int32) error { return nil }

var _ ingest.Warehouse = noRefresh{}
