# The buckets differ only in data, so one resource iterates over them.
# All of them: uniform bucket-level access (IAM only, no object ACLs) and
# public access prevention enforced, so no grant can ever make them public.
locals {
  # Bucket names are global: unless a variable names one, each is named
  # after the project (or name_prefix), so that no default names one of
  # production's and two deployments never collide. coalesce skips the
  # variables' default, "".
  bucket_prefix = coalesce(var.name_prefix, var.project_id)

  buckets = {
    landing = {
      # Production: the ERP's own bucket, adopted, not created (import block
      # below).
      name = coalesce(var.landing_bucket, "${local.bucket_prefix}-landing")
      # Versioning protects overwritten exports: every finalize event names a
      # generation, and a retried event must still be able to read the
      # generation it names after the ERP overwrote the file.
      versioning = true
      # Soft delete (7 days) is Google's default; keep it on raw sources.
      soft_delete_seconds = null
      lifecycle_rules = [{
        action                     = "Delete"
        age                        = null
        days_since_noncurrent_time = var.landing_noncurrent_version_days
        with_state                 = "ARCHIVED"
      }]
    }
    quarantine = {
      name = coalesce(var.quarantine_bucket, "${local.bucket_prefix}-quarantine")
      # Not versioned and no locked retention policy: a quarantine file is a
      # work list. Step 5 replays fixed rows and may rewrite or remove it, and
      # it can always be rebuilt from the source generation in landing.
      versioning          = false
      soft_delete_seconds = null
      lifecycle_rules = [{
        action                     = "Delete"
        age                        = var.quarantine_retention_days
        days_since_noncurrent_time = null
        with_state                 = "ANY"
      }]
    }
    staging = {
      name = coalesce(var.staging_bucket, "${local.bucket_prefix}-staging")
      # Transient load files: the ingest deletes them after each load; the
      # lifecycle rule is only the backstop for crashed attempts. Soft delete
      # would bill a week of storage for every deleted file, for nothing.
      versioning          = false
      soft_delete_seconds = 0
      lifecycle_rules = [{
        action                     = "Delete"
        age                        = var.staging_retention_days
        days_since_noncurrent_time = null
        with_state                 = "ANY"
      }]
    }
    build = {
      name = coalesce(var.build_bucket, "${local.bucket_prefix}-build")
      # Source archives of builds submitted by hand; worthless after the build.
      versioning          = false
      soft_delete_seconds = 0
      lifecycle_rules = [{
        action                     = "Delete"
        age                        = 7
        days_since_noncurrent_time = null
        with_state                 = "ANY"
      }]
    }
  }
}

# Encryption at rest uses Google-managed keys, a deliberate choice: the
# exports hold order lines, not card or health data, and a customer-managed
# key would add a key ring, rotation and an availability dependency to every
# read and load without a requirement asking for it.
resource "google_storage_bucket" "bucket" {
  for_each = local.buckets

  name                        = each.value.name
  location                    = upper(var.region)
  storage_class               = "STANDARD"
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  # Emptied by a destroy only in dev, and never when adopted: an adopted
  # bucket's objects are not the module's (environment.tf).
  force_destroy = !local.production && !(each.key == "landing" && var.adopt_landing_bucket)

  versioning {
    enabled = each.value.versioning
  }

  dynamic "soft_delete_policy" {
    for_each = each.value.soft_delete_seconds == null ? [] : [each.value.soft_delete_seconds]
    content {
      retention_duration_seconds = soft_delete_policy.value
    }
  }

  dynamic "lifecycle_rule" {
    for_each = each.value.lifecycle_rules
    content {
      action {
        type = lifecycle_rule.value.action
      }
      condition {
        age                        = lifecycle_rule.value.age
        days_since_noncurrent_time = lifecycle_rule.value.days_since_noncurrent_time
        with_state                 = lifecycle_rule.value.with_state
      }
    }
  }
}

# AlpinaShop's landing bucket exists before alpipe (the ERP writes to it):
# the first apply adopts it into the state instead of creating it, which
# would fail with 409. Once it is in the state the import is a no-op. An
# import ID may use variables since Terraform 1.6 and an import block may
# iterate since 1.7 (versions.tf requires 1.9): the for_each turns the import
# off unless adopt_landing_bucket (env/prod.tfvars), so that Terraform
# creates the bucket of any other environment.
import {
  for_each = var.adopt_landing_bucket ? toset(["landing"]) : toset([])

  to = google_storage_bucket.bucket[each.key]
  id = "${var.project_id}/${local.buckets[each.key].name}"
}
