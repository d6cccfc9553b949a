# The APIs alpipe uses. scripts/deploy.sh enables the same list with gcloud
# before the first apply (Terraform needs some of them to plan at all); a
# test checks that both lists agree. Keeping them here as well records them
# and makes sure they are never disabled by a destroy.
locals {
  apis = toset([
    "artifactregistry.googleapis.com",
    "bigquery.googleapis.com",
    "cloudbuild.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "cloudscheduler.googleapis.com",
    "eventarc.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "iamcredentials.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "pubsub.googleapis.com",
    "run.googleapis.com",
    "serviceusage.googleapis.com",
    "storage.googleapis.com",
  ])
}

resource "google_project_service" "api" {
  for_each = local.apis

  project            = var.project_id
  service            = each.key
  disable_on_destroy = false
}
