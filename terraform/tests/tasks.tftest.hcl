# The follow-up ticks of tasks.tf (plans only, against a mock of the google
# provider, as validations.tftest.hcl): nothing for the default "1m"; for
# "30s" the queue, the least grants and the service's variables.

mock_provider "google" {
  mock_data "google_project" {
    defaults = { number = "123456789012" }
  }
  mock_data "google_storage_project_service_account" {
    defaults = {
      email_address = "service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
      member        = "serviceAccount:service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
    }
  }
  mock_resource "google_service_account" {
    defaults = {
      email  = "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
      member = "serviceAccount:alpipe-watermark@alpipe-dev-example.iam.gserviceaccount.com"
      name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
    }
  }
}

variables {
  project_id                  = "alpipe-dev-example"
  environment                 = "dev"
  alert_notification_channels = ["projects/alpipe-dev-example/notificationChannels/1"]
  image                       = "europe-west1-docker.pkg.dev/alpipe-dev-example/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
}

run "one_minute_has_no_queue" {
  command = plan

  assert {
    condition     = length(google_cloud_tasks_queue.ticks) == 0 && length(google_cloud_tasks_queue_iam_member.tick_enqueuer) == 0 && length(google_service_account_iam_member.tick_act_as_invoker) == 0
    error_message = "tick_interval = \"1m\" must create no queue and no grant."
  }

  assert {
    condition     = length([for e in google_cloud_run_v2_service.function["AdvanceWatermark"].template[0].containers[0].env : e.name if startswith(e.name, "TICK_") && e.name != "TICK_LEASE"]) == 0
    error_message = "tick_interval = \"1m\" sets no TICK_ variable: it is the service's default."
  }
}

run "half_minute" {
  command = apply
  variables {
    tick_interval = "30s"
  }

  assert {
    condition     = google_cloud_tasks_queue.ticks[0].name == "alpipe-ticks" && google_cloud_tasks_queue.ticks[0].location == "europe-west1"
    error_message = "the queue is alpipe-ticks in the region."
  }

  assert {
    condition     = google_cloud_tasks_queue.ticks[0].retry_config[0].max_attempts == 2 && google_cloud_tasks_queue.ticks[0].retry_config[0].max_retry_duration == "20s" && google_cloud_tasks_queue.ticks[0].rate_limits[0].max_concurrent_dispatches == 1
    error_message = "a follow-up gets 2 attempts within 20 s, one at a time."
  }

  assert {
    condition     = google_cloud_tasks_queue_iam_member.tick_enqueuer[0].role == "roles/cloudtasks.enqueuer" && google_cloud_tasks_queue_iam_member.tick_enqueuer[0].name == "alpipe-ticks" && google_cloud_tasks_queue_iam_member.tick_enqueuer[0].member == google_service_account.function["AdvanceWatermark"].member
    error_message = "the watermark's runtime identity enqueues on the tick queue only."
  }

  assert {
    condition     = google_service_account_iam_member.tick_act_as_invoker[0].role == "roles/iam.serviceAccountUser" && google_service_account_iam_member.tick_act_as_invoker[0].service_account_id == google_service_account.invoker["AdvanceWatermark"].name && google_service_account_iam_member.tick_act_as_invoker[0].member == google_service_account.function["AdvanceWatermark"].member
    error_message = "the watermark's runtime identity acts as the tick's invoker only."
  }

  assert {
    condition = {
      for e in google_cloud_run_v2_service.function["AdvanceWatermark"].template[0].containers[0].env : e.name => e.value if contains(["TICK_INTERVAL", "TICK_QUEUE", "TICK_URL", "TICK_INVOKER"], e.name)
      } == {
      TICK_INTERVAL = "30s"
      TICK_QUEUE    = "projects/alpipe-dev-example/locations/europe-west1/queues/alpipe-ticks"
      TICK_URL      = "https://alpipe-watermark-123456789012.europe-west1.run.app"
      TICK_INVOKER  = "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
    }
    error_message = "the watermark service gets the follow-up's queue, URL and invoker."
  }

  assert {
    condition     = length([for e in google_cloud_run_v2_service.function["AggregateOrders"].template[0].containers[0].env : e.name if e.name == "TICK_INTERVAL"]) == 0
    error_message = "only the watermark service schedules follow-ups."
  }
}

run "half_minute_needs_every_minute" {
  command = plan
  variables {
    tick_interval      = "30s"
    watermark_schedule = "*/2 * * * *"
  }
  expect_failures = [var.tick_interval]
}

run "other_interval" {
  command = plan
  variables {
    tick_interval = "15s"
  }
  expect_failures = [var.tick_interval]
}

run "retries_past_the_half_minute" {
  command = plan
  variables {
    tick_interval = "30s"
    tick_queue    = { max_retry_duration = "40s" }
  }
  expect_failures = [var.tick_queue]
}
