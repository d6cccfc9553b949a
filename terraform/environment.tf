# What differs between a dev and a prod environment (var.environment).
#
# prod must never lose data by accident; dev must come down with
# `terraform destroy`. prevent_destroy would be the tool, but it cannot
# depend on a variable (Terraform evaluates lifecycle settings before any
# variable), so it is set on one guard per object holding production's data
# instead of on the objects themselves:
#   - terraform_data.production_data has an instance per guarded object
#     only in prod, with prevent_destroy and the object's ID as
#     triggers_replace. A plan that would delete the object drops its guard's
#     key; one that would re-create it makes the ID unknown, which replaces
#     the guard. Either way the guard would be destroyed, and the plan fails
#     before anything is touched, as prevent_destroy on the object would.
#     `terraform destroy` of prod fails the same way.
#   - The providers' and APIs' own protections follow the environment:
#     deletion_protection of the services and tables, the Firestore
#     database's delete protection and deletion policy, force_destroy of the
#     buckets, delete_contents_on_destroy of the dataset.
# The provider's deletion_policy = "PREVENT" was the other candidate: it is
# checked when the delete runs, after the plan's other deletions (the IAM
# grants and services that depend on the object) have been made.
locals {
  production = var.environment == "prod"

  # Every object whose deletion or re-creation loses data, by a key of its
  # own. Keys come from configuration, never from computed values, so that
  # the guards' for_each is known at plan time.
  data_objects = merge(
    # The ERP's exports (the only copy of the raw sources) and the rows
    # people are fixing; staging and build hold transient files only.
    { for k in ["landing", "quarantine"] : "bucket/${k}" => google_storage_bucket.bucket[k].id },
    # Undelivered and dead-lettered orders, and seven days of retained ones.
    { for k in keys(local.pubsub_triggered) : "subscription/${k}" => google_pubsub_subscription.push[k].id },
    {
      "subscription/dead_letter" = google_pubsub_subscription.dead_letter.id
      "topic/orders"             = google_pubsub_topic.orders.id
      # The ledger (what makes ingestion exactly-once) and the window state.
      "database/state"    = google_firestore_database.state.id
      "dataset/analytics" = google_bigquery_dataset.analytics.id
    },
    # The analytics history; views hold no data.
    { for k in keys(merge(local.tables, local.panes_tables)) : "table/${k}" => google_bigquery_table.table[k].id },
  )

  # An adopted landing bucket is not the module's to delete, in any
  # environment.
  guarded = { for k, id in local.data_objects : k => id if local.production || (k == "bucket/landing" && var.adopt_landing_bucket) }
}

resource "terraform_data" "production_data" {
  for_each = local.guarded

  triggers_replace = each.value

  # Deleting or re-creating a guarded object on purpose (a migration):
  # create the new one, move or drain the data, then `terraform state rm`
  # the old object and its guard.
  lifecycle {
    prevent_destroy = true
  }
}

# A warning, not an error, at every plan of an environment whose alerts
# notify nobody; prod refuses it (variables.tf).
check "alert_notification_channels" {
  assert {
    condition     = length(var.alert_notification_channels) > 0
    error_message = "alert_notification_channels is empty: the ${var.environment} environment's alerts notify nobody and only show in the Cloud Monitoring console."
  }
}
