# Alert policies: the three questions that need a person now.
locals {
  promql = {
    rows_read        = "${local.promql_prefix}${replace(google_logging_metric.ingest_rows["ingest_rows_read"].name, "/", "_")}"
    rows_quarantined = "${local.promql_prefix}${replace(google_logging_metric.ingest_rows["ingest_rows_quarantined"].name, "/", "_")}"
    watermark_lag    = "${local.promql_prefix}${replace(google_logging_metric.watermark_lag.name, "/", "_")}"
  }
}

# "How many rows were rejected, and why?" Page when a feed's rejected share
# over the last hour passes the threshold: a broken ERP export, not the usual
# handful of dirty rows. The reasons are on the dashboard and in quarantine.
resource "google_monitoring_alert_policy" "rejection_rate" {
  display_name          = "alpipe: ingest rejection rate above ${var.rejection_rate_threshold}"
  combiner              = "OR"
  severity              = "WARNING"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Quarantined / read rows, last hour, per feed"

    condition_prometheus_query_language {
      query               = <<-EOT
        sum by (feed) (increase(${local.promql.rows_quarantined}_sum{monitored_resource="cloud_run_revision"}[1h]))
        /
        sum by (feed) (increase(${local.promql.rows_read}_sum{monitored_resource="cloud_run_revision"}[1h]))
        > ${var.rejection_rate_threshold}
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: many rows rejected"
    content   = <<-EOT
      A share above ${var.rejection_rate_threshold} of the rows of feed $${metric.label.feed} read in the last hour were quarantined.
      Reasons: dashboard "alpipe", chart "Rows rejected by reason". Rows: gs://${var.quarantine_bucket}/${var.quarantine_prefix}<feed>/.
      Usual causes: a changed ERP export (columns renamed, another decimal format or encoding).
    EOT
  }
}

# Orders in the dead-letter subscription failed max_delivery_attempts times:
# they are in no window until someone republishes them.
resource "google_monitoring_alert_policy" "dead_letter" {
  display_name          = "alpipe: orders in the dead-letter subscription"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Undelivered messages in ${google_pubsub_subscription.dead_letter.name} > 0"

    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND resource.labels.subscription_id = \"${google_pubsub_subscription.dead_letter.name}\" AND metric.type = \"pubsub.googleapis.com/subscription/num_undelivered_messages\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "60s"

      aggregations {
        alignment_period   = "60s"
        per_series_aligner = "ALIGN_MAX"
      }

      trigger {
        count = 1
      }
    }
  }

  alert_strategy {
    auto_close = "86400s"
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: orders dead-lettered"
    content   = <<-EOT
      Orders could not be handled after ${var.max_delivery_attempts} deliveries and were moved to ${var.dead_letter_topic}.
      Find the cause in the alpipe-orders logs (errors with the same messageId), fix it, then republish the messages
      from subscription ${var.dead_letter_topic}-sub to ${var.orders_topic} with their attributes (momento_evento).
      Republishing is safe: orders are deduplicated by pedido_id.
    EOT
  }
}

# "What were the sales at 10:00, and is that number final?" depends on the
# watermark moving. Fires when it trails processing time by too much, or when
# no tick has been logged for 10 minutes (scheduler paused, service failing).
resource "google_monitoring_alert_policy" "watermark_stalled" {
  display_name          = "alpipe: watermark stalled"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Mean watermark lag over 10 min > ${var.watermark_lag_threshold_seconds}s, or no tick for 10 min"

    condition_prometheus_query_language {
      query               = <<-EOT
        (
          max by (aggregation) (
            rate(${local.promql.watermark_lag}_sum{monitored_resource="cloud_run_revision"}[10m])
            /
            rate(${local.promql.watermark_lag}_count{monitored_resource="cloud_run_revision"}[10m])
          ) > ${var.watermark_lag_threshold_seconds}
        )
        or
        absent_over_time(${local.promql.watermark_lag}_count{monitored_resource="cloud_run_revision"}[10m])
      EOT
      duration            = "0s"
      evaluation_interval = "60s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: watermark stalled"
    content   = <<-EOT
      The event-time watermark is not advancing: hourly sales panes stay EARLY and windows do not close.
      Check the Cloud Scheduler job ${local.functions.AdvanceWatermark.service}-tick (paused? failing with 403/5xx?)
      and the ${local.functions.AdvanceWatermark.service} logs (tick lease held by a crashed tick expires after ${var.stream.tick_lease}).
    EOT
  }
}
