# The identity the Cloud Build pipeline (cloudbuild.yaml) runs as. The
# pipeline only builds, pushes and rolls the four services forward to a new
# image digest; infrastructure changes are applied by a person with
# Terraform. So this account gets no admin role: it can push to the one
# repository, update (not create, delete or invoke) the four services, act
# as their runtime accounts for that update, read hand-submitted sources and
# write build logs.

resource "google_service_account" "deployer" {
  account_id   = "alpipe-deployer"
  display_name = "alpipe pipeline deployer"
  description  = "Cloud Build identity of cloudbuild.yaml: pushes the server image and updates the alpipe services to its digest."
}

# roles/run.developer would also allow invoking, deleting and creating
# services; a custom role keeps the deployer to image roll-forwards.
resource "google_project_iam_custom_role" "image_deployer" {
  project     = var.project_id
  role_id     = "alpipeImageDeployer"
  title       = "alpipe image deployer"
  description = "Update an existing Cloud Run service to a new revision (gcloud run services update --image) and follow the operation."
  permissions = [
    "run.configurations.get",
    "run.operations.get",
    "run.revisions.get",
    "run.revisions.list",
    "run.services.get",
    "run.services.update",
  ]
}

resource "google_cloud_run_v2_service_iam_member" "deployer" {
  for_each = local.functions

  project  = var.project_id
  location = google_cloud_run_v2_service.function[each.key].location
  name     = google_cloud_run_v2_service.function[each.key].name
  role     = google_project_iam_custom_role.image_deployer.name
  member   = google_service_account.deployer.member
}

# Deploying a revision that runs as an account requires actAs on it: granted
# per runtime account, not project-wide.
resource "google_service_account_iam_member" "deployer_act_as" {
  for_each = local.functions

  service_account_id = google_service_account.function[each.key].name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.deployer.member
}

resource "google_artifact_registry_repository_iam_member" "deployer_writer" {
  project    = var.project_id
  location   = google_artifact_registry_repository.images.location
  repository = google_artifact_registry_repository.images.name
  role       = "roles/artifactregistry.writer"
  member     = google_service_account.deployer.member
}

resource "google_storage_bucket_iam_member" "deployer_build_sources" {
  bucket = google_storage_bucket.bucket["build"].name
  role   = "roles/storage.objectViewer"
  member = google_service_account.deployer.member
}

# A user-specified build account must be able to write the build's logs
# (cloudbuild.yaml sets logging: CLOUD_LOGGING_ONLY).
resource "google_project_iam_member" "deployer_log_writer" {
  project = var.project_id
  role    = "roles/logging.logWriter"
  member  = google_service_account.deployer.member
}
