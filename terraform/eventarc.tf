# IngestCSV is triggered by google.cloud.storage.object.v1.finalized on the
# landing bucket: every new generation (upload, overwrite, copy) fires, at
# least once; the ledger makes the ingest exactly-once on top of that.

# Cloud Storage publishes bucket notifications to the Pub/Sub transport that
# Eventarc creates and names itself, hence the project-level grant documented
# for Eventarc storage triggers.
resource "google_project_iam_member" "gcs_agent_pubsub_publisher" {
  project = var.project_id
  role    = "roles/pubsub.publisher"
  member  = data.google_storage_project_service_account.gcs.member
}

# The trigger identity must be allowed to receive events (a project-level
# role by design) and to invoke the one service (granted in run.tf).
resource "google_project_iam_member" "trigger_event_receiver" {
  for_each = local.storage_triggered

  project = var.project_id
  role    = "roles/eventarc.eventReceiver"
  member  = google_service_account.invoker[each.key].member
}

resource "google_eventarc_trigger" "storage" {
  for_each = local.storage_triggered

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

  service_account = google_service_account.invoker[each.key].email

  depends_on = [
    google_project_iam_member.gcs_agent_pubsub_publisher,
    google_project_iam_member.trigger_event_receiver,
    google_cloud_run_v2_service_iam_member.invoker,
  ]
}
