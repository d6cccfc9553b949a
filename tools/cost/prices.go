package main

// Prices for europe-west1, the region of every resource in terraform/,
// read on 2026-11-29 from the search tool's stored copies of the pages
// (not the live pages); no newer stored copy states the europe-west1
// Firestore or Dataflow figures, so those stay assumed.
//
//   - Firestore: https://airbyte.com/data-engineering-resources/google-firestore-pricing
//     (US regional rates, assumed for europe-west1: Google's page loads its
//     table by script); storage: the multi-region rate from
//     https://www.twblogs.net/a/5e4f845fbd9eee101e8581aa, an upper bound;
//     free usage and "TTL deletes get none": https://cloud.google.com/firestore/pricing
//   - Cloud Run: https://cloud.google.com/run/pricing (Tier 1, request-based
//     billing, rounded up to 100 ms; memory and requests from the copy of
//     its table at https://cloudwebschool.com/tools/cloud-run-cost-calculator/)
//   - Pub/Sub: https://cloud.google.com/pubsub/pricing (as transcribed at
//     https://raw.githubusercontent.com/api-evangelist/google/refs/heads/main/plans/google-plans-pricing.yml),
//     at least 1,000 bytes per publish and per push
//   - BigQuery: https://cloud.google.com/bigquery/pricing (storage stated
//     for the US and EU multi-regions, assumed for europe-west1; streaming
//     inserts billed at least 1 KB a row); on-demand queries:
//     https://adriennevermorel.com/notes/bigquery-on-demand-billing-mechanics/
//     (Google's stored copies show the older $5), at least 10 MB per table
//   - Cloud Storage: https://cloud.google.com/storage/pricing and
//     https://cloud.google.com/storage/pricing-examples (no free usage
//     outside US regions)
//   - Cloud Scheduler: https://cloud.google.com/scheduler/pricing (per job)
//   - Dataflow: https://cloud.google.com/dataflow/pricing holds no figures
//     in the stored copies; the last list prices for Tier 1 regions, assumed
//
// A price is USD for per units of the quantity it is charged on (bytes for
// the per-GiB and per-TiB prices, milliseconds for the per-second ones).
type price struct {
	usd  string
	per  int64
	unit string // as the price sheet shows it
}

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	tib = 1 << 40
)

var (
	firestoreRead    = price{"0.03", 100_000, "100,000 document reads (assumed)"}
	firestoreWrite   = price{"0.09", 100_000, "100,000 document writes (assumed)"}
	firestoreDelete  = price{"0.01", 100_000, "100,000 document deletes (assumed)"}
	firestoreStorage = price{"0.18", gib, "GiB-month (assumed)"}

	runCPU      = price{"0.000024", 1000, "vCPU-second"}
	runMemory   = price{"0.0000025", 1000, "GiB-second"}
	runRequests = price{"0.40", 1_000_000, "1,000,000 requests"}

	pubsub    = price{"40", tib, "TiB (publish + delivery)"}
	scheduler = price{"0.10", 1, "job-month"}

	bqStorage   = price{"0.02", gib, "GiB-month, active logical (assumed)"}
	bqStreaming = price{"0.01", 200 * mib, "200 MiB streamed (insertAll)"}
	bqQuery     = price{"6.25", tib, "TiB scanned (on demand)"}

	gcsStorage = price{"0.020", gib, "GiB-month (Standard)"}
	gcsClassA  = price{"0.005", 1_000, "1,000 Class A operations"}
	gcsClassB  = price{"0.0004", 1_000, "1,000 Class B operations"}

	dataflowVCPU   = price{"0.069", 1, "streaming worker vCPU-hour (assumed)"}
	dataflowMemory = price{"0.003557", 1, "streaming worker GB-hour (assumed)"}
)

// Free usage: Firestore's per day on the project's (default) database,
// the others per month and billing account.
const (
	freeFirestoreReads   = 50_000
	freeFirestoreWrites  = 20_000
	freeFirestoreDeletes = 20_000
	freeFirestoreStorage = 1 * gib
	freeRunCPUms         = 180_000 * 1000
	freeRunMemoryms      = 360_000 * 1000
	freeRunRequests      = 2_000_000
	freePubSub           = 10 * gib
	freeSchedulerJobs    = 3
	freeBQStorage        = 10 * gib
	freeBQQuery          = 1 * tib
)

// prices are the rows of the price sheet, in the order it shows them.
var prices = []struct {
	name string
	p    price
}{
	{"Firestore reads", firestoreRead}, {"Firestore writes", firestoreWrite}, {"Firestore deletes (TTL deletes too)", firestoreDelete},
	{"Firestore storage", firestoreStorage},
	{"Cloud Run CPU", runCPU}, {"Cloud Run memory", runMemory}, {"Cloud Run requests", runRequests},
	{"Pub/Sub throughput", pubsub}, {"Cloud Scheduler", scheduler},
	{"BigQuery storage", bqStorage}, {"BigQuery streaming inserts", bqStreaming}, {"BigQuery queries", bqQuery},
	{"Cloud Storage", gcsStorage}, {"Cloud Storage writes", gcsClassA}, {"Cloud Storage reads", gcsClassB},
	{"Dataflow vCPU", dataflowVCPU}, {"Dataflow memory", dataflowMemory},
}

const freeUsage = "Firestore 50,000 reads, 20,000 writes and 20,000 deletes a day and 1 GiB (the `(default)` database; TTL deletes get none); " +
	"Cloud Run 180,000 vCPU-seconds, 360,000 GiB-seconds and 2,000,000 requests, Pub/Sub 10 GiB, Cloud Scheduler 3 jobs, " +
	"BigQuery 10 GiB stored and 1 TiB queried a month (per billing account); Cloud Storage none in europe-west1"
