resource "google_artifact_registry_repository" "images" {
  location      = var.region
  repository_id = var.artifact_repository
  format        = "DOCKER"
  description   = "alpipe server images (cmd/server), tagged with the commit SHA and deployed by digest."

  # Tags stay mutable on purpose: deployments always use the digest, and a
  # re-run of a commit's build must be able to push its tag again.
  docker_config {
    immutable_tags = false
  }

  # Keep the recent images (the deployed one and rollback candidates), delete
  # the rest after 30 days so the repository does not grow without bound.
  cleanup_policy_dry_run = false

  cleanup_policies {
    id     = "keep-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = 20
    }
  }

  cleanup_policies {
    id     = "delete-old"
    action = "DELETE"
    condition {
      older_than = "2592000s"
    }
  }
}
