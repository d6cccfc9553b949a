# Bucket names are global: unset, each is named after the project, or
# name_prefix, so a scratch deployment with the defaults never collides with
# (or adopts) AlpinaShop's buckets; production names its own (tests/prod).
# And what a dev environment guards against deletion: nothing it creates,
# but an adopted landing bucket, which is not the module's to delete.
# Plans only, against a mock of the google provider (see
# deployment.tftest.hcl).

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
  project_id                  = "alpipe-dev-a"
  environment                 = "dev"
  alert_notification_channels = ["projects/alpipe-dev-a/notificationChannels/1"]
  image                       = "europe-west1-docker.pkg.dev/alpipe-dev-a/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
}

run "one_project" {
  command = plan
  assert {
    condition     = output.bucket_names == { build = "alpipe-dev-a-build", landing = "alpipe-dev-a-landing", quarantine = "alpipe-dev-a-quarantine", staging = "alpipe-dev-a-staging" }
    error_message = "Buckets ${jsonencode(output.bucket_names)}: want <project>-<role>."
  }
  assert {
    condition     = length(terraform_data.production_data) == 0
    error_message = "A dev environment guards nothing: terraform destroy must work."
  }
}

run "another_project" {
  command = plan
  variables {
    project_id = "alpipe-dev-b"
  }
  assert {
    condition     = output.bucket_names == { build = "alpipe-dev-b-build", landing = "alpipe-dev-b-landing", quarantine = "alpipe-dev-b-quarantine", staging = "alpipe-dev-b-staging" }
    error_message = "Buckets ${jsonencode(output.bucket_names)}: want <project>-<role>."
  }
}

run "a_prefix" {
  command = plan
  variables {
    name_prefix = "acme-alpipe"
  }
  assert {
    condition     = output.bucket_names == { build = "acme-alpipe-build", landing = "acme-alpipe-landing", quarantine = "acme-alpipe-quarantine", staging = "acme-alpipe-staging" }
    error_message = "Buckets ${jsonencode(output.bucket_names)}: want <name_prefix>-<role>."
  }
}

run "one_bucket_named" {
  command = plan
  variables {
    quarantine_bucket = "q-of-my-own"
  }
  assert {
    condition     = output.bucket_names == { build = "alpipe-dev-a-build", landing = "alpipe-dev-a-landing", quarantine = "q-of-my-own", staging = "alpipe-dev-a-staging" }
    error_message = "Buckets ${jsonencode(output.bucket_names)}: want the named quarantine bucket, the others after the project."
  }
}

# The import needs the object: a mock provider cannot import, the override
# gives it (see tests/prod). Its ID is known in the plan only because it is
# imported, as <project>/<name>'s bucket.
run "dev_adopting_a_landing_bucket" {
  command = plan
  variables {
    landing_bucket       = "erp-exports"
    adopt_landing_bucket = true
  }
  override_resource {
    target = google_storage_bucket.bucket["landing"]
    values = { id = "erp-exports" }
  }
  assert {
    condition     = keys(terraform_data.production_data) == ["bucket/landing"] && google_storage_bucket.bucket["landing"].name == "erp-exports" && google_storage_bucket.bucket["landing"].id == "erp-exports"
    error_message = "A dev environment that adopts the landing bucket imports it and guards it alone: ${jsonencode(keys(terraform_data.production_data))}."
  }
}
