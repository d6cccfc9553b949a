# A miniature of terraform/: what the accessors read, in the shapes the real
# configuration uses (for_each over a local map, dynamic env, references to
# computed attributes).
variable "project_id" {
  type = string
}

variable "region" {
  type    = string
  default = "europe-west1"
}

variable "image" {
  type    = string
  default = null
}

data "google_project" "this" {
  project_id = var.project_id
}

locals {
  agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
  common = {
    GOOGLE_CLOUD_PROJECT = var.project_id
    FIRESTORE_DATABASE   = google_firestore_database.state.name
    STAGING_BUCKET       = google_storage_bucket.bucket["staging"].name
  }
  functions = {
    Ingest = { service = "svc-ingest", timeout = "540s", concurrency = 1, env = merge(local.common, { LANDING_BUCKET = google_storage_bucket.bucket["landing"].name }) }
    Orders = { service = "svc-orders", timeout = "60s", concurrency = 40, env = merge(local.common, { AGENT = local.agent }) }
    Tick   = { service = "svc-tick", timeout = "60s", concurrency = 4, env = local.common }
  }
  deployed = { for k, f in local.functions : k => f if var.image != null }
}

resource "google_firestore_database" "state" {
  name        = "pipeline"
  location_id = var.region
}

resource "google_storage_bucket" "bucket" {
  for_each = { landing = "land-${var.project_id}", staging = "stage" }
  name     = each.value
  location = upper(var.region)
}

resource "google_service_account" "invoker" {
  for_each   = local.functions
  account_id = "${each.value.service}-inv"
}

resource "google_cloud_run_v2_service" "function" {
  for_each = local.deployed
  name     = each.value.service
  location = var.region

  template {
    timeout                          = each.value.timeout
    max_instance_request_concurrency = each.value.concurrency
    containers {
      image = var.image
      env {
        name  = "FUNCTION_TARGET"
        value = each.key
      }
      dynamic "env" {
        for_each = each.value.env
        content {
          name  = env.key
          value = env.value
        }
      }
    }
  }
}

resource "google_pubsub_topic" "orders" {
  name = "orders"
}

resource "google_pubsub_topic" "dlq" {
  name = "orders-dlq"
}

resource "google_pubsub_subscription" "dlq" {
  name                 = "orders-dlq-sub"
  topic                = google_pubsub_topic.dlq.id
  ack_deadline_seconds = 30
}

resource "google_pubsub_subscription" "push" {
  for_each             = { for k, f in local.deployed : k => f if k == "Orders" }
  name                 = "orders-${each.value.service}"
  topic                = google_pubsub_topic.orders.id
  ack_deadline_seconds = 45

  push_config {
    push_endpoint = google_cloud_run_v2_service.function[each.key].uri
    oidc_token {
      service_account_email = google_service_account.invoker[each.key].email
      audience              = google_cloud_run_v2_service.function[each.key].uri
    }
  }

  retry_policy {
    minimum_backoff = "5s"
    maximum_backoff = "300s"
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dlq.id
    max_delivery_attempts = 7
  }
}

resource "google_cloud_scheduler_job" "tick" {
  for_each         = { for k, f in local.deployed : k => f if k == "Tick" }
  name             = "${each.value.service}-job"
  schedule         = "* * * * *"
  time_zone        = "Etc/UTC"
  attempt_deadline = each.value.timeout

  retry_config {
    retry_count = 0
  }

  http_target {
    http_method = "POST"
    uri         = google_cloud_run_v2_service.function[each.key].uri
    headers     = { "Content-Type" = "application/json" }
    body        = base64encode("{}")
  }
}

resource "google_eventarc_trigger" "storage" {
  for_each = { for k, f in local.deployed : k => f if k == "Ingest" }
  name     = "${each.value.service}-finalized"
  location = var.region

  matching_criteria {
    attribute = "type"
    value     = "google.cloud.storage.object.v1.finalized"
  }

  matching_criteria {
    attribute = "bucket"
    value     = google_storage_bucket.bucket["landing"].name
  }

  destination {
    cloud_run_service {
      service = google_cloud_run_v2_service.function[each.key].name
      region  = var.region
    }
  }
}
