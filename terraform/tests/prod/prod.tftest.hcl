# Production's variables, env/prod.tfvars, planned by Terraform against a
# mock of the google provider. Run from terraform/ with them:
#   terraform test -test-directory=tests/prod -var-file=env/prod.tfvars
# (scripts/tf-check.sh does). Plans only: nothing is applied, so nothing
# has to be destroyed, which production's guards would refuse.

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

# The ERP's landing bucket is imported, and a mock provider cannot import:
# the override gives the imported object. A bucket being created has an
# unknown ID in the plan; this one's is known because it is imported.
override_resource {
  target = google_storage_bucket.bucket["landing"]
  values = { id = "alpinashop-catalogo" }
}

# What scripts/deploy.sh passes once an image is built: without one, a plan
# that would create the services fails (run.tf).
variables {
  image = "europe-west1-docker.pkg.dev/alpinashop-datos/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
}

# Alerts that reach nobody are a silent failure: production refuses them.
# (Set here rather than taken from env/prod.tfvars, so that the run holds
# whatever channels the file lists.)
run "an_empty_alert_list_is_refused" {
  command = plan
  variables {
    alert_notification_channels = []
  }
  expect_failures = [var.alert_notification_channels]
}

run "production_plan" {
  command = plan

  # A stand-in until env/prod.tfvars names the on-call channels; with them
  # listed there, this override can go.
  variables {
    alert_notification_channels = ["projects/alpinashop-datos/notificationChannels/1"]
  }

  assert {
    condition     = var.project_id == "alpinashop-datos" && var.environment == "prod"
    error_message = "env/prod.tfvars must name production: project alpinashop-datos, environment prod."
  }
  # The ERP's bucket is adopted (imported: its ID is known in the plan), and
  # every bucket keeps production's name.
  assert {
    condition     = var.adopt_landing_bucket && google_storage_bucket.bucket["landing"].id == "alpinashop-catalogo"
    error_message = "Production imports the ERP's landing bucket alpinashop-catalogo."
  }
  assert {
    condition = { for k, b in google_storage_bucket.bucket : k => b.name } == {
      build = "alpinashop-alpipe-build", landing = "alpinashop-catalogo", quarantine = "alpinashop-cuarentena", staging = "alpinashop-alpipe-staging"
    }
    error_message = "Production's buckets: ${jsonencode({ for k, b in google_storage_bucket.bucket : k => b.name })}."
  }
  # Every guard and deletion protection on.
  assert {
    condition = toset(keys(terraform_data.production_data)) == toset(concat(
      ["bucket/landing", "bucket/quarantine", "database/state", "dataset/analytics", "subscription/AggregateOrders", "subscription/dead_letter", "topic/orders"],
      [for t in keys(google_bigquery_table.table) : "table/${t}"],
    ))
    error_message = "Guarded objects ${jsonencode(keys(terraform_data.production_data))}: every object holding production's data needs one."
  }
  assert {
    condition = (
      alltrue([for s in google_cloud_run_v2_service.function : s.deletion_protection]) &&
      alltrue([for t in merge(google_bigquery_table.table, google_bigquery_table.view) : t.deletion_protection]) &&
      !google_bigquery_dataset.analytics.delete_contents_on_destroy &&
      google_firestore_database.state.delete_protection_state == "DELETE_PROTECTION_ENABLED" &&
      google_firestore_database.state.deletion_policy == "ABANDON" &&
      alltrue([for b in google_storage_bucket.bucket : !b.force_destroy])
    )
    error_message = "Production keeps every deletion protection of the provider and the APIs on."
  }
  assert {
    condition     = google_monitoring_alert_policy.ingest_failures.notification_channels == tolist(["projects/alpinashop-datos/notificationChannels/1"])
    error_message = "The alerts notify the channels of alert_notification_channels."
  }
}
