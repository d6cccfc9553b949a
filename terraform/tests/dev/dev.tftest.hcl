# A dev environment, env/dev.tfvars.example, planned by Terraform against a
# mock of the google provider. Run from terraform/ with it:
#   terraform test -test-directory=tests/dev -var-file=env/dev.tfvars.example
# (scripts/tf-check.sh does). That a dev environment can be destroyed is
# shown by tests/deployment.tftest.hcl, whose apply (a dev deployment) is
# destroyed at the end of the run.

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

# No override of the landing bucket: an import from the mock provider would
# fail the plan, so the plan passing shows that dev imports nothing.
run "dev_plan" {
  command = plan

  # What scripts/deploy.sh passes once an image is built: without one, a
  # plan that would create the services fails (run.tf).
  variables {
    image = "europe-west1-docker.pkg.dev/my-alpipe-dev/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }

  # Allowed in dev, with a warning at every plan.
  expect_failures = [check.alert_notification_channels]

  assert {
    condition     = var.environment == "dev" && !var.adopt_landing_bucket
    error_message = "env/dev.tfvars.example must describe a dev environment that adopts no bucket."
  }
  assert {
    condition = { for k, b in google_storage_bucket.bucket : k => b.name } == {
      build = "${var.project_id}-build", landing = "${var.project_id}-landing", quarantine = "${var.project_id}-quarantine", staging = "${var.project_id}-staging"
    }
    error_message = "A dev environment creates its own buckets, named after its project: ${jsonencode({ for k, b in google_storage_bucket.bucket : k => b.name })}."
  }
  assert {
    condition     = length(terraform_data.production_data) == 0
    error_message = "A dev environment has no guard: terraform destroy must work."
  }
  assert {
    condition = (
      alltrue([for s in google_cloud_run_v2_service.function : !s.deletion_protection]) &&
      alltrue([for t in merge(google_bigquery_table.table, google_bigquery_table.view) : !t.deletion_protection]) &&
      google_bigquery_dataset.analytics.delete_contents_on_destroy &&
      google_firestore_database.state.delete_protection_state == "DELETE_PROTECTION_DISABLED" &&
      google_firestore_database.state.deletion_policy == "DELETE" &&
      alltrue([for b in google_storage_bucket.bucket : b.force_destroy])
    )
    error_message = "terraform destroy of a dev environment must delete what it created: no deletion protection, buckets and dataset emptied."
  }
}
