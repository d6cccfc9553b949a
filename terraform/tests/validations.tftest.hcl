# The variable validations and the services' postcondition, run by Terraform
# (plans only, against a mock of the google provider; see deployment.tftest.hcl).

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
}

variables {
  project_id                  = "alpipe-dev-example"
  environment                 = "dev"
  alert_notification_channels = ["projects/alpipe-dev-example/notificationChannels/1"]
  image                       = "europe-west1-docker.pkg.dev/alpipe-dev-example/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
}

# Without var.image the services hold a stand-in image that must never be
# deployed: creating a service from it fails the plan.
run "first_deployment_without_image" {
  command = plan
  variables {
    image = null
  }
  expect_failures = [google_cloud_run_v2_service.function]
}

run "largest_accepted_settings" {
  command = plan
  variables {
    stream           = { batch_wait = "1000ms", batch_max_orders = 250, max_clock_skew = "1h" }
    sweep            = { window = "96h", grace = "1h", max_objects = 1000, concurrency = 4 }
    landing_prefixes = ["exportaciones/", "otros/sub/"]
  }
}

run "no_batching_and_another_named_database" {
  command = plan
  variables {
    stream             = { batch_wait = "0s" }
    firestore_database = "alpipe-test"
  }
}

run "the_applications_firestore_database" {
  command = plan
  variables {
    firestore_database = "(default)"
  }
  expect_failures = [var.firestore_database]
}

run "firestore_database_too_short" {
  command = plan
  variables {
    firestore_database = "ab"
  }
  expect_failures = [var.firestore_database]
}

run "batch_wait_over_a_second" {
  command = plan
  variables {
    stream = { batch_wait = "2s" }
  }
  expect_failures = [var.stream]
}

run "batch_wait_not_a_duration" {
  command = plan
  variables {
    stream = { batch_wait = "soon" }
  }
  expect_failures = [var.stream]
}

run "batch_over_a_transaction" {
  command = plan
  variables {
    stream = { batch_max_orders = 300 }
  }
  expect_failures = [var.stream]
}

run "clock_skew_under_a_minute" {
  command = plan
  variables {
    stream = { max_clock_skew = "30s" }
  }
  expect_failures = [var.stream]
}

run "tick_lease_within_the_tick_timeout" {
  command = plan
  variables {
    stream = { tick_lease = "60s" }
  }
  expect_failures = [var.stream]
}

run "sweep_grace_shorter_than_an_ingest" {
  command = plan
  variables {
    sweep = { grace = "5m" }
  }
  expect_failures = [var.sweep]
}

run "sweep_window_within_eventarcs_retries" {
  command = plan
  variables {
    sweep = { window = "24h" }
  }
  expect_failures = [var.sweep]
}

run "sweep_concurrency" {
  command = plan
  variables {
    sweep = { concurrency = 8 }
  }
  expect_failures = [var.sweep]
}

run "ledger_lease_within_the_ingest_timeout" {
  command = plan
  variables {
    ledger_lease = "9m"
  }
  expect_failures = [var.ledger_lease]
}

run "landing_prefix_without_slash" {
  command = plan
  variables {
    landing_prefixes = ["exportaciones"]
  }
  expect_failures = [var.landing_prefixes]
}

run "ttl_on_a_collection_alpipe_does_not_write" {
  command = plan
  variables {
    firestore_ttl_collection_groups = ["nope"]
  }
  expect_failures = [var.firestore_ttl_collection_groups]
}

run "sweep_schedule" {
  command = plan
  variables {
    sweep_schedule = "*/15 * * *"
  }
  expect_failures = [var.sweep_schedule]
}

run "image_by_tag" {
  command = plan
  variables {
    image = "europe-west1-docker.pkg.dev/p/alpipe/server:latest"
  }
  expect_failures = [var.image]
}

run "project_number_instead_of_id" {
  command = plan
  variables {
    project_id = "123456789012"
  }
  expect_failures = [var.project_id]
}

run "an_environment_other_than_dev_or_prod" {
  command = plan
  variables {
    environment = "staging"
  }
  expect_failures = [var.environment]
}

# Importing a bucket named after the project would adopt whatever bucket
# happens to have that name.
run "adopting_a_landing_bucket_without_naming_it" {
  command = plan
  variables {
    adopt_landing_bucket = true
  }
  expect_failures = [var.adopt_landing_bucket]
}

run "name_prefix_not_fit_for_a_bucket" {
  command = plan
  variables {
    name_prefix = "Alpipe_Dev"
  }
  expect_failures = [var.name_prefix]
}
