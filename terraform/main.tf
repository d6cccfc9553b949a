# alpipe: AlpinaShop's data pipeline. One image (cmd/server) runs as four
# Cloud Run services, selected by FUNCTION_TARGET; this file declares them as
# data, and the per-concern files (run.tf, iam.tf, eventarc.tf, pubsub.tf,
# scheduler.tf, ...) iterate over that data instead of repeating blocks.

data "google_project" "this" {
  project_id = var.project_id
}

# The Cloud Storage service agent publishes the bucket notifications that
# Eventarc storage triggers are built on. Reading it also makes sure it exists.
data "google_storage_project_service_account" "gcs" {
  project = var.project_id
}

locals {
  # Google-managed identity that pushes messages, dead-letters them and mints
  # the OIDC tokens of push subscriptions and Eventarc deliveries.
  pubsub_service_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"

  # Settings every function reads: production backends.
  backend_env = {
    GOOGLE_CLOUD_PROJECT = var.project_id
    STATE_STORE          = "firestore"
    FIRESTORE_DATABASE   = google_firestore_database.state.name
    WAREHOUSE            = "bigquery"
    BIGQUERY_DATASET     = google_bigquery_dataset.analytics.dataset_id
    BIGQUERY_LOCATION    = google_bigquery_dataset.analytics.location
  }

  # Event-driven requests get at most 540 s (Eventarc's limit). The ingest
  # stops its own attempt a margin earlier (INGEST_DEADLINE), so that the
  # ledger write recording a failed attempt still happens inside the request
  # instead of being cut off by the platform; both derive from here so they
  # cannot drift apart.
  event_timeout_seconds          = 540
  ingest_deadline_margin_seconds = 60

  # What loading a landing object needs: IngestCSV and SweepLanding ingest
  # through the same path.
  ingest_env = {
    LANDING_BUCKET    = google_storage_bucket.bucket["landing"].name
    LANDING_PREFIXES  = join(",", var.landing_prefixes)
    STAGING_BUCKET    = google_storage_bucket.bucket["staging"].name
    STAGING_PREFIX    = var.staging_prefix
    QUARANTINE_BUCKET = google_storage_bucket.bucket["quarantine"].name
    QUARANTINE_PREFIX = var.quarantine_prefix
    LEDGER_LEASE      = var.ledger_lease
    INGEST_DEADLINE   = "${local.event_timeout_seconds - local.ingest_deadline_margin_seconds}s"
  }

  sweep_env = {
    SWEEP_WINDOW      = var.sweep.window
    SWEEP_GRACE       = var.sweep.grace
    SWEEP_MAX_OBJECTS = tostring(var.sweep.max_objects)
    SWEEP_CONCURRENCY = tostring(var.sweep.concurrency)
  }

  # AggregateOrders and AdvanceWatermark must see identical stream settings:
  # both are built from this one map. The aggregations themselves are
  # not settings: both services run every one declared in
  # internal/aggregation/declarations (embedded in the image), the same
  # files bigquery.tf creates their tables and views from.
  stream_env = {
    TICK_LEASE       = var.stream.tick_lease
    MAX_CLOCK_SKEW   = var.stream.max_clock_skew
    BATCH_WAIT       = var.stream.batch_wait
    BATCH_MAX_ORDERS = tostring(var.stream.batch_max_orders)
  }

  # The four functions. Keys are the FUNCTION_TARGET names registered in
  # functions/. Each gets its own runtime service account (account) and its
  # own invoker identity (invoker), the only principal allowed to call it.
  # services.json records each one's name, timeout, concurrency and env as
  # deployed (the stack starts its processes from it); terraform test holds
  # it equal to the plan, so a change here fails until it is updated.
  functions = {
    IngestCSV = {
      service     = "alpipe-ingest"
      account     = "alpipe-ingest"
      invoker     = "alpipe-ingest-trigger"
      description = "ERP CSV drops (Eventarc storage finalize) -> validated rows in BigQuery, quarantine for the rest, exactly once."
      trigger     = "storage"
      # Event-driven requests get at most 540 s; the ledger lease is longer
      # so that a redelivery never takes over a file still being loaded.
      timeout = "${local.event_timeout_seconds}s"
      # One file per instance: parsing is CPU-bound on the single vCPU, and
      # memory stays bounded by one stream's buffers.
      concurrency = 1
      memory      = "512Mi"
      env         = merge(local.backend_env, local.ingest_env)
    }
    AggregateOrders = {
      service     = "alpipe-orders"
      account     = "alpipe-orders"
      invoker     = "alpipe-orders-push"
      description = "Orders from Pub/Sub push (pedidos-nuevos) -> event-time window state in Firestore, LATE panes and dropped orders in BigQuery."
      trigger     = "pubsub"
      # The push request times out at the ack deadline; answering later
      # would only cause a duplicate delivery.
      timeout = "${var.push_ack_deadline_seconds}s"
      # Requests wait on their batch's Firestore transaction, not on CPU, and
      # the requests one instance holds at once are its batch: up to
      # BATCH_MAX_ORDERS (200) orders per transaction. Since state layout 3
      # an order writes only its own dedup record (and reads stream/control,
      # which only ticks write), so a hot key is no write hot spot; batching
      # saves transactions, not contention.
      #
      # Memory does not grow with concurrency: each push reserves, before it
      # is read, what handling it can allocate (functions/budget.go: 256 KiB
      # + 8 x its body + 16 KiB per order line, upper bounds that
      # TestPushCostCoversAllocations holds) from a 160 MiB budget per
      # instance, and one that does not fit gets 503 unread, which Pub/Sub
      # redelivers. Pushes hold at most 160 MiB, so with about 40 MiB of
      # clients and runtime the heap stays under 2 x (160 + 40) = 400 MiB
      # at GOGC=100 (the GC lets it reach twice what is live): below 512Mi.
      # Change pushBudget with memory.
      concurrency = 200
      memory      = "512Mi"
      env         = merge(local.backend_env, local.stream_env)
    }
    AdvanceWatermark = {
      service     = "alpipe-watermark"
      account     = "alpipe-watermark"
      invoker     = "alpipe-watermark-tick"
      description = "Cloud Scheduler tick every minute -> advances the watermark, emits EARLY/ON_TIME/LATE panes, expires state."
      trigger     = "schedule"
      # Shorter than the tick lease (validated on var.stream), and than the
      # one-minute schedule in the normal case.
      timeout = "60s"
      # A second, overlapping tick must reach the code to find the lease held
      # and answer 200; with concurrency 1 it would queue and fail with 429.
      concurrency = 4
      memory      = "512Mi"
      env         = merge(local.backend_env, local.stream_env, local.tick_env)
    }
    SweepLanding = {
      service     = "alpipe-sweeper"
      account     = "alpipe-sweeper"
      invoker     = "alpipe-sweeper-run"
      description = "Cloud Scheduler (sweep_schedule, every 15 min by default) -> ingests landing files whose Eventarc events were all lost (no final ledger record after the grace period), through the IngestCSV path."
      trigger     = "sweep"
      # As long as an event-driven ingest, so that one object's ingest gets
      # the same INGEST_DEADLINE as under IngestCSV.
      timeout = "${local.event_timeout_seconds}s"
      # One run at a time: it bounds its own work (SWEEP_MAX_OBJECTS,
      # SWEEP_CONCURRENCY), and a second run in parallel would only race the
      # first for the same files.
      concurrency = 1
      # SWEEP_CONCURRENCY files in flight, each with one stream's buffers.
      memory = "1Gi"
      env    = merge(local.backend_env, local.ingest_env, local.sweep_env)
    }
  }

  # Every function always exists in the configuration: which resources exist
  # never depends on var.image, so an apply without it (an infrastructure
  # change) cannot plan to destroy a service, the Eventarc trigger, the push
  # subscription and its backlog, or a scheduler job. run.tf explains how the
  # image is supplied.
  storage_triggered  = { for k, f in local.functions : k => f if f.trigger == "storage" }
  pubsub_triggered   = { for k, f in local.functions : k => f if f.trigger == "pubsub" }
  schedule_triggered = { for k, f in local.functions : k => f if f.trigger == "schedule" }
  sweep_triggered    = { for k, f in local.functions : k => f if f.trigger == "sweep" }
}
