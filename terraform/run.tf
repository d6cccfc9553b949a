# The Cloud Run services: one image, FUNCTION_TARGET picks the function
# (cmd/server serves only that function, at "/").
#
# How the image reaches a service: Terraform sets it only when it creates the
# service (the first deployment, a new function, a re-creation); afterwards
# the pipeline rolls it forward and Terraform ignores it (lifecycle below).
# So var.image is needed only by an apply that creates a service. Without it
# the configuration still declares every service, with a stand-in image that
# is never deployed: for an existing service the stand-in is ignored like any
# image, and a service that would be created from it fails the plan (the
# postcondition below) instead of running something that acknowledges orders
# and file events without handling them.
locals {
  image_not_set = "image-not-set.invalid/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
}

resource "google_cloud_run_v2_service" "function" {
  for_each = local.functions

  name                = each.value.service
  location            = var.region
  description         = each.value.description
  deletion_protection = local.production

  # Only internal traffic: Eventarc, Pub/Sub push and Cloud Scheduler calls
  # from this project count as internal, and nothing else needs to reach
  # these services. Authentication is still required on top (no public
  # invoker; see the run.invoker grants below).
  ingress              = "INGRESS_TRAFFIC_INTERNAL_ONLY"
  invoker_iam_disabled = false

  template {
    service_account                  = google_service_account.function[each.key].email
    timeout                          = each.value.timeout
    max_instance_request_concurrency = each.value.concurrency

    scaling {
      # Scale to zero between files and ticks: the campaign traffic is bursty
      # and a Go cold start is well under a second.
      min_instance_count = 0
      max_instance_count = var.max_instances[each.key]
    }

    containers {
      image = var.image != null ? var.image : local.image_not_set

      resources {
        limits = {
          cpu    = "1"
          memory = each.value.memory
        }
        # All work happens inside a request (the ingest answers only once the
        # file is loaded), so CPU outside requests is not needed.
        cpu_idle          = true
        startup_cpu_boost = true
      }

      env {
        name  = "FUNCTION_TARGET"
        value = each.key
      }

      dynamic "env" {
        for_each = each.value.env
        content {
          name  = env.key
          value = env.value
        }
      }
    }
  }

  # After the first deployment the image is rolled forward by the pipeline
  # (cloudbuild.yaml: gcloud run services update --image=...@sha256:...),
  # not by Terraform: an infrastructure change must never roll it back.
  # gcloud also stamps the client fields.
  lifecycle {
    ignore_changes = [
      template[0].containers[0].image,
      client,
      client_version,
    ]

    # Planned image: the running one for an existing service (ignored
    # above), the configured one for a service being created.
    postcondition {
      condition     = self.template[0].containers[0].image != local.image_not_set
      error_message = "Service ${each.value.service} would be created, and var.image is not set: pass -var image=REGION-docker.pkg.dev/PROJECT/REPO/server@sha256:... (scripts/deploy.sh infra passes the image the services run; on a first deployment run its build and deploy steps)."
    }
  }

  depends_on = [
    google_project_iam_member.runtime,
    google_project_iam_member.firestore_user,
    google_bigquery_dataset_iam_member.runtime,
    google_storage_bucket_iam_member.runtime,
  ]
}

# The only invoker of each service is its own trigger identity.
resource "google_cloud_run_v2_service_iam_member" "invoker" {
  for_each = local.functions

  project  = var.project_id
  location = google_cloud_run_v2_service.function[each.key].location
  name     = google_cloud_run_v2_service.function[each.key].name
  role     = "roles/run.invoker"
  member   = google_service_account.invoker[each.key].member
}
