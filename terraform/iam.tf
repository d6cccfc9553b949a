# Identities and least-privilege grants.
#
# Each function runs as its own service account (google_service_account.function)
# holding only what that function touches, and is invoked by its own identity
# (google_service_account.invoker): the Eventarc trigger, the Pub/Sub push
# subscription or the Scheduler job. That invoker holds roles/run.invoker on
# its one service and nothing else (the Eventarc one also receives events).

resource "google_service_account" "function" {
  for_each = local.functions

  account_id   = each.value.account
  display_name = "alpipe ${each.key} runtime"
  description  = "Runtime identity of the ${each.value.service} Cloud Run service (${each.key})."
}

resource "google_service_account" "invoker" {
  for_each = local.functions

  account_id   = each.value.invoker
  display_name = "alpipe ${each.key} invoker"
  description  = "Identity the ${each.value.trigger} trigger uses to call ${each.value.service}; holds roles/run.invoker on that service only."
}

locals {
  # What each runtime identity needs, by where the grant lives.
  runtime_grants = {
    IngestCSV = {
      # Load jobs and the daily-aggregate query jobs run in the project.
      project = ["roles/bigquery.jobUser"]
      # Append to lineas_pedido / opiniones, rewrite ventas_diarias_sku partitions.
      dataset = ["roles/bigquery.dataEditor"]
      # Read exports; write (and on a retry, overwrite) quarantine and staging
      # objects. objectUser, unlike objectAdmin, cannot change IAM.
      buckets = {
        landing    = "roles/storage.objectViewer"
        quarantine = "roles/storage.objectUser"
        staging    = "roles/storage.objectUser"
      }
      firestore = true
    }
    AggregateOrders = {
      project = []
      # Streaming inserts (tabledata.insertAll) of LATE panes and dropped
      # orders: no job is created, so no jobUser.
      dataset   = ["roles/bigquery.dataEditor"]
      buckets   = {}
      firestore = true
    }
    AdvanceWatermark = {
      project   = []
      dataset   = ["roles/bigquery.dataEditor"]
      buckets   = {}
      firestore = true
    }
    # Ingests like IngestCSV, so the same grants; objectViewer on landing also
    # holds storage.objects.list, which the sweeper needs to find missed files.
    SweepLanding = {
      project = ["roles/bigquery.jobUser"]
      dataset = ["roles/bigquery.dataEditor"]
      buckets = {
        landing    = "roles/storage.objectViewer"
        quarantine = "roles/storage.objectUser"
        staging    = "roles/storage.objectUser"
      }
      firestore = true
    }
  }

  runtime_project_grants = merge([
    for fn, g in local.runtime_grants : { for role in g.project : "${fn}/${role}" => { function = fn, role = role } }
  ]...)

  runtime_dataset_grants = merge([
    for fn, g in local.runtime_grants : { for role in g.dataset : "${fn}/${role}" => { function = fn, role = role } }
  ]...)

  runtime_bucket_grants = merge([
    for fn, g in local.runtime_grants : { for b, role in g.buckets : "${fn}/${b}" => { function = fn, bucket = b, role = role } }
  ]...)

  firestore_users = toset([for fn, g in local.runtime_grants : fn if g.firestore])
}

resource "google_project_iam_member" "runtime" {
  for_each = local.runtime_project_grants

  project = var.project_id
  role    = each.value.role
  member  = google_service_account.function[each.value.function].member
}

resource "google_bigquery_dataset_iam_member" "runtime" {
  for_each = local.runtime_dataset_grants

  dataset_id = google_bigquery_dataset.analytics.dataset_id
  role       = each.value.role
  member     = google_service_account.function[each.value.function].member
}

resource "google_storage_bucket_iam_member" "runtime" {
  for_each = local.runtime_bucket_grants

  bucket = google_storage_bucket.bucket[each.value.bucket].name
  role   = each.value.role
  member = google_service_account.function[each.value.function].member
}

# Firestore IAM is granted on the project; the condition narrows it to the
# one database alpipe uses, so another database in the project stays closed.
resource "google_project_iam_member" "firestore_user" {
  for_each = local.firestore_users

  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.function[each.key].member

  condition {
    title       = "alpipe-database-only"
    description = "Only the ${google_firestore_database.state.name} Firestore database."
    expression  = "resource.name == \"projects/${var.project_id}/databases/${google_firestore_database.state.name}\""
  }
}

# The Pub/Sub service agent mints the OIDC tokens for push deliveries and for
# Eventarc (which delivers through Pub/Sub). Projects created before April
# 2021 lack this permission by default; granting it on the two invoker
# accounts only, not project-wide, keeps impersonation scoped.
resource "google_service_account_iam_member" "pubsub_token_creator" {
  for_each = merge(local.storage_triggered, local.pubsub_triggered)

  service_account_id = google_service_account.invoker[each.key].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_service_agent
}
