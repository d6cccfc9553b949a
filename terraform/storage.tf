# The buckets differ only in data, so one resource iterates over them.
# All of them: uniform bucket-level access (IAM only, no object ACLs) and
# public access prevention enforced, so no grant can ever make them public.
locals {
  buckets = {
    landing = {
      name = var.landing_bucket
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
      name = var.quarantine_bucket
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
      name = var.staging_bucket
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
      name = var.build_bucket
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
  force_destroy               = false

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
