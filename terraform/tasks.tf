# Early panes every 30 seconds (docs/ticks.md). Cloud Scheduler fires at
# most once a minute; with tick_interval = "30s" each Scheduler tick of
# AdvanceWatermark schedules one follow-up tick for the half minute as a
# named task on this queue, and Scheduler stays the watchdog: a lost
# follow-up costs its half minute, the next minute's tick runs anyway. With
# the default "1m" nothing here exists and the service gets no variable.

locals {
  half_minute_ticks = var.tick_interval == "30s"

  # Spelled out rather than read from local.functions, which these
  # variables are merged into (a reference would be a cycle); the queue's
  # preconditions hold them equal.
  tick_service = "alpipe-watermark"
  tick_invoker = "alpipe-watermark-tick@${var.project_id}.iam.gserviceaccount.com"
  tick_queue   = "projects/${var.project_id}/locations/${var.region}/queues/${var.tick_queue.name}"
  # Cloud Run's deterministic URL, also the audience Cloud Run accepts.
  tick_url = "https://${local.tick_service}-${data.google_project.this.number}.${var.region}.run.app"

  # The AdvanceWatermark service's variables (main.tf merges them into its
  # env); none for "1m", the service's default.
  tick_env = local.half_minute_ticks ? {
    TICK_INTERVAL = "30s"
    TICK_QUEUE    = local.tick_queue
    TICK_URL      = local.tick_url
    TICK_INVOKER  = local.tick_invoker
  } : {}

  # Cloud Tasks' service agent mints the tasks' OIDC tokens.
  cloudtasks_service_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-cloudtasks.iam.gserviceaccount.com"
}

# Here rather than in apis.tf: only a "30s" deployment uses Cloud Tasks,
# and Terraform enables it before creating the queue.
resource "google_project_service" "cloudtasks" {
  count = local.half_minute_ticks ? 1 : 0

  project            = var.project_id
  service            = "cloudtasks.googleapis.com"
  disable_on_destroy = false
}

resource "google_cloud_tasks_queue" "ticks" {
  count = local.half_minute_ticks ? 1 : 0

  name     = var.tick_queue.name
  location = var.region

  # One follow-up a minute: a second at once is never needed.
  rate_limits {
    max_dispatches_per_second = 1
    max_concurrent_dispatches = 1
  }

  # A follow-up is worth retrying only within its half minute; after that
  # the next Scheduler tick does its work.
  retry_config {
    max_attempts       = var.tick_queue.max_attempts
    max_retry_duration = var.tick_queue.max_retry_duration
    min_backoff        = "5s"
    max_backoff        = "5s"
    max_doublings      = 0
  }

  lifecycle {
    precondition {
      condition     = local.functions.AdvanceWatermark.service == local.tick_service && google_service_account.invoker["AdvanceWatermark"].email == local.tick_invoker
      error_message = "tasks.tf spells the watermark service (${local.tick_service}) and its invoker (${local.tick_invoker}) as main.tf names them; update tasks.tf's locals."
    }
  }

  depends_on = [google_project_service.cloudtasks]
}

# The watermark's runtime identity may add tasks to this queue only...
resource "google_cloud_tasks_queue_iam_member" "tick_enqueuer" {
  count = local.half_minute_ticks ? 1 : 0

  project  = var.project_id
  location = google_cloud_tasks_queue.ticks[0].location
  name     = google_cloud_tasks_queue.ticks[0].name
  role     = "roles/cloudtasks.enqueuer"
  member   = google_service_account.function["AdvanceWatermark"].member
}

# ...and only as the tick's invoker identity (iam.serviceAccounts.actAs,
# which a task with an OIDC token of that account requires), on that one
# account, which already holds roles/run.invoker on the watermark service
# and nothing else.
resource "google_service_account_iam_member" "tick_act_as_invoker" {
  count = local.half_minute_ticks ? 1 : 0

  service_account_id = google_service_account.invoker["AdvanceWatermark"].name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.function["AdvanceWatermark"].member
}

# Cloud Tasks' service agent mints the OIDC token for that account. Like the
# Pub/Sub agent's grant in iam.tf, scoped to the one account rather than
# relying on the agent's project-wide role, which projects that enabled the
# API before 2019 lack.
resource "google_service_account_iam_member" "cloudtasks_token_creator" {
  count = local.half_minute_ticks ? 1 : 0

  service_account_id = google_service_account.invoker["AdvanceWatermark"].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.cloudtasks_service_agent
}

# A follow-up the service could not schedule (it logs "follow-up tick not
# scheduled" and goes on): each one costs its half minute's panes.
resource "google_logging_metric" "tick_follow_up_failed" {
  count = local.half_minute_ticks ? 1 : 0

  name        = "alpipe/tick_follow_up_failed"
  description = "Follow-up ticks the watermark service failed to schedule on Cloud Tasks; each delays that half minute's panes to the next Scheduler tick."
  filter      = "${local.run_logs} AND resource.labels.service_name=\"${local.tick_service}\" AND jsonPayload.message=\"follow-up tick not scheduled\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
  }
}
