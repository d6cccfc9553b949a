# alpipe: AlpinaShop's data pipeline. One image (cmd/server) runs as three
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

  ingest_env = {
    STAGING_BUCKET    = google_storage_bucket.bucket["staging"].name
    STAGING_PREFIX    = var.staging_prefix
    QUARANTINE_BUCKET = google_storage_bucket.bucket["quarantine"].name
    QUARANTINE_PREFIX = var.quarantine_prefix
    LEDGER_LEASE      = var.ledger_lease
  }

  # AggregateOrders and AdvanceWatermark must see identical stream settings:
  # both are built from this one map.
  stream_env = {
    AGGREGATION      = var.stream.aggregation
    AGGREGATION_KEY  = var.stream.aggregation_key
    WINDOW_SIZE      = var.stream.window_size
    OUT_OF_ORDERNESS = var.stream.out_of_orderness
    IDLE_TIMEOUT     = var.stream.idle_timeout
    EARLY_DELAY      = var.stream.early_delay
    ALLOWED_LATENESS = var.stream.allowed_lateness
    LATE_DELAY       = var.stream.late_delay
    ACCUMULATION     = var.stream.accumulation
    STATE_SHARDS     = tostring(var.stream.state_shards)
    TICK_LEASE       = var.stream.tick_lease
  }

  # The three functions. Keys are the FUNCTION_TARGET names registered in
  # functions/. Each gets its own runtime service account (account) and its
  # own invoker identity (invoker), the only principal allowed to call it.
  functions = {
    IngestCSV = {
      service     = "alpipe-ingest"
      account     = "alpipe-ingest"
      invoker     = "alpipe-ingest-trigger"
      description = "ERP CSV drops (Eventarc storage finalize) -> validated rows in BigQuery, quarantine for the rest, exactly once."
      trigger     = "storage"
      # Event-driven requests get at most 540 s; the ledger lease is longer
      # so that a redelivery never takes over a file still being loaded.
      timeout = "540s"
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
      # Requests wait on Firestore transactions, not on CPU: many in flight
      # per instance keep the instance count (and contention) low.
      concurrency = 40
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
      env         = merge(local.backend_env, local.stream_env)
    }
  }

  # Nothing can run before an image exists: on the first apply (image null)
  # only the data, identities and observability are created.
  deployed = { for k, f in local.functions : k => f if var.image != null }

  storage_triggered  = { for k, f in local.deployed : k => f if f.trigger == "storage" }
  pubsub_triggered   = { for k, f in local.deployed : k => f if f.trigger == "pubsub" }
  schedule_triggered = { for k, f in local.deployed : k => f if f.trigger == "schedule" }
}
