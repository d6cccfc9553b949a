package cost

import (
	"github.com/alpinashop/alpipe/internal/numeric"
)

// ReadOn is when the price pages below were read, through the search
// tool's stored copies of them (not the live pages).
const ReadOn = "2026-11-29"

// Price is one unit price in USD: Amount buys Per units of Unit.
type Price struct {
	Amount numeric.Dec `json:"amount"`
	Per    int64       `json:"per"`
	Unit   string      `json:"unit"`
	// Source is the page the price was read from; Read says when (and the
	// page's own date when the stored copy shows one).
	Source string `json:"source"`
	Read   string `json:"read"`
	// Assumed: no stored page states this price for the chosen location;
	// Note says what it rests on.
	Assumed bool   `json:"assumed"`
	Note    string `json:"note,omitempty"`
}

// Prices are the unit prices the model uses, for europe-west1 (the
// region every resource of the Terraform configuration lives in).
type Prices struct {
	FirestoreRead    Price `json:"firestore_read"`
	FirestoreWrite   Price `json:"firestore_write"`
	FirestoreDelete  Price `json:"firestore_delete"`
	FirestoreStorage Price `json:"firestore_storage"`

	CloudRunCPU      Price `json:"cloud_run_cpu"`
	CloudRunMemory   Price `json:"cloud_run_memory"`
	CloudRunRequests Price `json:"cloud_run_requests"`

	PubSubThroughput Price `json:"pubsub_throughput"`
	SchedulerJob     Price `json:"scheduler_job"`

	BigQueryStorage   Price `json:"bigquery_storage"`
	BigQueryStreaming Price `json:"bigquery_streaming"`
	BigQueryQuery     Price `json:"bigquery_query"`

	StorageStandard Price `json:"storage_standard"`
	StorageClassA   Price `json:"storage_class_a"`
	StorageClassB   Price `json:"storage_class_b"`

	DataflowVCPU            Price `json:"dataflow_vcpu"`
	DataflowMemory          Price `json:"dataflow_memory"`
	DataflowDisk            Price `json:"dataflow_disk"`
	DataflowStreamingEngine Price `json:"dataflow_streaming_engine"`

	Free FreeTier `json:"free"`
}

// FreeTier is the free usage each service grants (per billing account,
// or per project's default database for Firestore).
type FreeTier struct {
	Source string `json:"source"`
	// Firestore, per day, (default) database only. TTL deletes get none.
	FirestoreReadsPerDay   int64 `json:"firestore_reads_per_day"`
	FirestoreWritesPerDay  int64 `json:"firestore_writes_per_day"`
	FirestoreDeletesPerDay int64 `json:"firestore_deletes_per_day"`
	FirestoreStorageGiB    int64 `json:"firestore_storage_gib"`
	// Cloud Run, per month, request-based billing.
	CloudRunVCPUSeconds int64 `json:"cloud_run_vcpu_seconds"`
	CloudRunGiBSeconds  int64 `json:"cloud_run_gib_seconds"`
	CloudRunRequests    int64 `json:"cloud_run_requests"`
	// Pub/Sub throughput per month, Scheduler jobs, BigQuery per month.
	PubSubGiB        int64 `json:"pubsub_gib"`
	SchedulerJobs    int64 `json:"scheduler_jobs"`
	BigQueryStorGiB  int64 `json:"bigquery_storage_gib"`
	BigQueryQueryTiB int64 `json:"bigquery_query_tib"`
}

func usd(s string) numeric.Dec {
	d, err := numeric.Parse(s, false)
	if err != nil {
		panic("cost: bad price literal " + s) // a literal below; caught by the tests
	}
	return d
}

const (
	firestorePricing = "https://cloud.google.com/firestore/pricing"
	firestoreUS      = "https://airbyte.com/data-engineering-resources/google-firestore-pricing"
	firestoreMulti   = "https://www.twblogs.net/a/5e4f845fbd9eee101e8581aa"
	firestoreTTL     = "https://cloud.google.com/firestore/docs/ttl"
	cloudRunPricing  = "https://cloud.google.com/run/pricing"
	cloudRunThird    = "https://cloudwebschool.com/tools/cloud-run-cost-calculator/"
	pubsubPricing    = "https://cloud.google.com/pubsub/pricing"
	pubsubCopy       = "https://raw.githubusercontent.com/api-evangelist/google/refs/heads/main/plans/google-plans-pricing.yml"
	schedulerPricing = "https://cloud.google.com/scheduler/pricing"
	bigqueryPricing  = "https://cloud.google.com/bigquery/pricing"
	bigqueryOnDemand = "https://adriennevermorel.com/notes/bigquery-on-demand-billing-mechanics/"
	storagePricing   = "https://cloud.google.com/storage/pricing"
	storageExamples  = "https://cloud.google.com/storage/pricing-examples"
	dataflowPricing  = "https://cloud.google.com/dataflow/pricing"
)

// Published returns the prices used by docs/cost.md, each with the page it
// was read from. Firestore is priced as a regional (europe-west1) database;
// MultiRegionFirestore gives the eur3 figures.
func Published() Prices {
	read := ReadOn + " (stored copy)"
	return Prices{
		FirestoreRead: Price{Amount: usd("0.03"), Per: 100_000, Unit: "document reads", Source: firestoreUS, Read: read, Assumed: true,
			Note: "published for US regions; europe-west1 assumed equal (the stored Google page lists locations but not the figures)"},
		FirestoreWrite: Price{Amount: usd("0.09"), Per: 100_000, Unit: "document writes", Source: firestoreUS, Read: read, Assumed: true,
			Note: "as document reads"},
		FirestoreDelete: Price{Amount: usd("0.01"), Per: 100_000, Unit: "document deletes", Source: firestoreUS, Read: read, Assumed: true,
			Note: "cut off in the stored excerpt: one third of a write, the ratio of the published multi-region rates; TTL deletes are billed as deletes (" + firestoreTTL + ")"},
		FirestoreStorage: Price{Amount: usd("0.18"), Per: 1, Unit: "GiB-month", Source: firestoreMulti, Read: read, Assumed: true,
			Note: "the multi-region rate, used as an upper bound for europe-west1"},

		CloudRunCPU: Price{Amount: usd("0.000024"), Per: 1, Unit: "vCPU-second", Source: cloudRunPricing, Read: read,
			Note: "Tier 1, CPU only allocated during request processing (request-based billing); billed time rounded up to 100 ms"},
		CloudRunMemory: Price{Amount: usd("0.0000025"), Per: 1, Unit: "GiB-second", Source: cloudRunThird, Read: read,
			Note: "the stored Google page is cut before this column; figure from a third-party copy of the Tier 1 table"},
		CloudRunRequests: Price{Amount: usd("0.40"), Per: 1_000_000, Unit: "requests", Source: cloudRunThird, Read: read,
			Note: "as memory"},

		PubSubThroughput: Price{Amount: usd("40"), Per: 1, Unit: "TiB (publish + delivery)", Source: pubsubCopy,
			Read: read + "; transcribed from " + pubsubPricing + " on 2026-09-20",
			Note: "a minimum of 1 KB (1,000 bytes here) is assessed for each request"},
		SchedulerJob: Price{Amount: usd("0.10"), Per: 1, Unit: "job-month", Source: schedulerPricing, Read: read,
			Note: "a job is billed per job, not per execution ($0.10 per 31 days)"},

		BigQueryStorage: Price{Amount: usd("0.02"), Per: 1, Unit: "GiB-month (active logical)", Source: bigqueryPricing, Read: read, Assumed: true,
			Note: "stated for the US and EU multi-regions; europe-west1 assumed equal"},
		BigQueryStreaming: Price{Amount: usd("0.01"), Per: 200, Unit: "MiB streamed (insertAll), each row at least 1 KB", Source: bigqueryPricing, Read: read},
		BigQueryQuery: Price{Amount: usd("6.25"), Per: 1, Unit: "TiB scanned (on demand), at least 10 MB per table a query reads", Source: bigqueryOnDemand, Read: read,
			Note: "the stored Google copies show an older $5 per TB; this third-party page gives the current on-demand rate"},

		StorageStandard: Price{Amount: usd("0.020"), Per: 1, Unit: "GiB-month (Standard, europe-west1)", Source: storagePricing, Read: read},
		StorageClassA:   Price{Amount: usd("0.005"), Per: 1_000, Unit: "Class A operations (object writes)", Source: storageExamples, Read: read},
		StorageClassB:   Price{Amount: usd("0.0004"), Per: 1_000, Unit: "Class B operations (object reads)", Source: storageExamples, Read: read},

		DataflowVCPU: Price{Amount: usd("0.069"), Per: 1, Unit: "streaming worker vCPU-hour", Source: dataflowPricing, Read: read, Assumed: true,
			Note: "the stored Google pages hold no figures (the table is loaded by script); last list price remembered for Tier 1 regions"},
		DataflowMemory: Price{Amount: usd("0.003557"), Per: 1, Unit: "streaming worker GB-hour", Source: dataflowPricing, Read: read, Assumed: true,
			Note: "as vCPU; the same figure appears in third-party Dataflow cost scripts"},
		DataflowDisk: Price{Amount: usd("0.000054"), Per: 1, Unit: "standard PD GB-hour", Source: dataflowPricing, Read: read, Assumed: true,
			Note: "as memory"},
		DataflowStreamingEngine: Price{Amount: usd("0.018"), Per: 1, Unit: "GiB processed by Streaming Engine", Source: dataflowPricing, Read: read, Assumed: true,
			Note: "as vCPU"},

		Free: FreeTier{
			Source:                 firestorePricing + ", " + cloudRunPricing + ", " + pubsubCopy + ", " + schedulerPricing + ", " + bigqueryPricing,
			FirestoreReadsPerDay:   50_000,
			FirestoreWritesPerDay:  20_000,
			FirestoreDeletesPerDay: 20_000,
			FirestoreStorageGiB:    1,
			CloudRunVCPUSeconds:    180_000,
			CloudRunGiBSeconds:     360_000,
			CloudRunRequests:       2_000_000,
			PubSubGiB:              10,
			SchedulerJobs:          3,
			BigQueryStorGiB:        10,
			BigQueryQueryTiB:       1,
		},
	}
}

// MultiRegionFirestore returns p with Firestore priced as a multi-region
// (eur3) database, the rates the stored copy of Google's page states.
func MultiRegionFirestore(p Prices) Prices {
	read := ReadOn + " (stored copy of Google's Firestore pricing page)"
	p.FirestoreRead = Price{Amount: usd("0.06"), Per: 100_000, Unit: "document reads", Source: firestoreMulti, Read: read}
	p.FirestoreWrite = Price{Amount: usd("0.18"), Per: 100_000, Unit: "document writes", Source: firestoreMulti, Read: read}
	p.FirestoreDelete = Price{Amount: usd("0.02"), Per: 100_000, Unit: "document deletes", Source: firestoreMulti, Read: read}
	return p
}
