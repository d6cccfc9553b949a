# AdvanceWatermark is a timer: a plain authenticated POST every minute.
resource "google_cloud_scheduler_job" "tick" {
  for_each = local.schedule_triggered

  name        = "${each.value.service}-tick"
  region      = var.region
  description = "Advances the event-time watermark and emits panes (${each.key})."
  schedule    = var.watermark_schedule
  time_zone   = "Etc/UTC"

  attempt_deadline = each.value.timeout

  # No retries: ticks are idempotent and the next one, a minute later, does
  # whatever a failed one left undone.
  retry_config {
    retry_count = 0
  }

  http_target {
    http_method = "POST"
    uri         = google_cloud_run_v2_service.function[each.key].uri
    headers = {
      "Content-Type" = "application/json"
    }
    body = base64encode("{}")

    oidc_token {
      service_account_email = google_service_account.invoker[each.key].email
      audience              = google_cloud_run_v2_service.function[each.key].uri
    }
  }

  depends_on = [google_cloud_run_v2_service_iam_member.invoker]
}

# SweepLanding: the same authenticated POST, every 15 minutes. The run is
# bounded by SWEEP_MAX_OBJECTS, idempotent (the ledger decides what is
# ingested) and the next run continues what one left, hence no retries.
resource "google_cloud_scheduler_job" "sweep" {
  for_each = local.sweep_triggered

  name        = each.value.service
  region      = var.region
  description = "Ingests landing files whose Eventarc events were all lost (${each.key})."
  schedule    = var.sweep_schedule
  time_zone   = "Etc/UTC"

  attempt_deadline = each.value.timeout

  retry_config {
    retry_count = 0
  }

  http_target {
    http_method = "POST"
    uri         = google_cloud_run_v2_service.function[each.key].uri
    headers = {
      "Content-Type" = "application/json"
    }
    body = base64encode("{}")

    oidc_token {
      service_account_email = google_service_account.invoker[each.key].email
      audience              = google_cloud_run_v2_service.function[each.key].uri
    }
  }

  depends_on = [google_cloud_run_v2_service_iam_member.invoker]
}
