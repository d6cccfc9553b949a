# Orders arrive on pedidos-nuevos and reach AggregateOrders through an
# authenticated push subscription. Push has no exactly-once delivery: the
# function deduplicates by pedido_id itself.

resource "google_pubsub_topic" "orders" {
  name = var.orders_topic

  # Seven days of retained messages let a new or repaired subscription seek
  # back and replay the campaign, at storage cost only.
  message_retention_duration = "604800s"

  # Deleting the topic loses those seven days and detaches the
  # subscriptions: guarded in prod (environment.tf).
}

resource "google_pubsub_topic" "dead_letter" {
  name = var.dead_letter_topic
}

# Without a subscription, messages published to the dead-letter topic would
# be dropped. This pull subscription holds them for a person (and the
# dead-letter alert) to inspect and republish.
resource "google_pubsub_subscription" "dead_letter" {
  name                       = "${var.dead_letter_topic}-sub"
  topic                      = google_pubsub_topic.dead_letter.id
  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"

  # Its messages are orders no window holds yet: guarded in prod
  # (environment.tf).
  expiration_policy {
    ttl = "" # never expire, even when nobody pulls for months
  }
}

resource "google_pubsub_subscription" "push" {
  for_each = local.pubsub_triggered

  name  = "${var.orders_topic}-${each.value.service}"
  topic = google_pubsub_topic.orders.id

  # Also the push request timeout (see AggregateOrders' timeout).
  ack_deadline_seconds       = var.push_ack_deadline_seconds
  message_retention_duration = "604800s"

  expiration_policy {
    ttl = ""
  }

  push_config {
    # FUNCTION_TARGET is set, so the function answers at "/". The wrapped
    # envelope is kept (no no_wrapper block): AggregateOrders reads
    # messageId, attributes and deliveryAttempt from it.
    push_endpoint = google_cloud_run_v2_service.function[each.key].uri

    oidc_token {
      service_account_email = google_service_account.invoker[each.key].email
      audience              = google_cloud_run_v2_service.function[each.key].uri
    }
  }

  retry_policy {
    minimum_backoff = "${var.push_retry_backoff.minimum_seconds}s"
    maximum_backoff = "${var.push_retry_backoff.maximum_seconds}s"
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter.id
    max_delivery_attempts = var.max_delivery_attempts
  }

  # Its backlog is orders not yet counted: in prod a plan that would delete
  # or re-create the subscription (a rename, a changed topic) fails
  # (environment.tf). Replacing it on purpose: create the new one, let the
  # old one drain, then `terraform state rm` the old one and its guard.
  depends_on = [
    google_cloud_run_v2_service_iam_member.invoker,
    google_service_account_iam_member.pubsub_token_creator,
  ]
}

# Dead lettering is done by the Pub/Sub service agent: it must be able to
# publish to the dead-letter topic and to acknowledge (subscribe) on the
# source subscription, or messages are never forwarded.
resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  topic  = google_pubsub_topic.dead_letter.id
  role   = "roles/pubsub.publisher"
  member = local.pubsub_service_agent
}

resource "google_pubsub_subscription_iam_member" "dead_letter_subscriber" {
  for_each = local.pubsub_triggered

  subscription = google_pubsub_subscription.push[each.key].id
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_service_agent
}
