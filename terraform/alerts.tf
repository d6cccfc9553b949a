# Alert policies: the questions that need a person now.
locals {
  promql = {
    rows_read        = "${local.promql_prefix}${replace(google_logging_metric.ingest_rows["ingest_rows_read"].name, "/", "_")}"
    rows_quarantined = "${local.promql_prefix}${replace(google_logging_metric.ingest_rows["ingest_rows_quarantined"].name, "/", "_")}"
    watermark_lag    = "${local.promql_prefix}${replace(google_logging_metric.watermark_lag.name, "/", "_")}"
    ingest_failed    = "${local.promql_prefix}${replace(google_logging_metric.ingest_failed.name, "/", "_")}"
    sweep_found      = "${local.promql_prefix}${replace(google_logging_metric.sweep["sweep_found"].name, "/", "_")}"
    schema_drift     = "${local.promql_prefix}${replace(google_logging_metric.schema_drift.name, "/", "_")}"
    failing_cells    = "${local.promql_prefix}${replace(google_logging_metric.tick_failing_cells.name, "/", "_")}"
    refresh_overflow = "${local.promql_prefix}${replace(google_logging_metric.refresh_overflow.name, "/", "_")}"
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
      Reasons: dashboard "alpipe", chart "Rows rejected by reason". Rows: gs://${local.buckets.quarantine.name}/${var.quarantine_prefix}<feed>/.
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

# "Did last night's files load?" A file attempt that fails answers non-2xx
# and Eventarc retries it for up to 24 h; one that fails permanently is
# recorded FAILED and waits for a person. Busy answers (409: another attempt
# holds the file's lease) are the ledger working, not failures.
resource "google_monitoring_alert_policy" "ingest_failures" {
  display_name          = "alpipe: ingest failures"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Files FAILED permanently in the last hour"

    condition_prometheus_query_language {
      query               = <<-EOT
        sum by (feed) (increase(${local.promql.ingest_failed}{monitored_resource="cloud_run_revision"}[1h])) > 0
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  conditions {
    display_name = "${local.functions.IngestCSV.service} non-2xx answers in the last hour > ${var.ingest_error_threshold}"

    condition_prometheus_query_language {
      query               = <<-EOT
        sum by (response_code) (increase(run_googleapis_com:request_count{monitored_resource="cloud_run_revision", service_name="${local.functions.IngestCSV.service}", response_code_class!="2xx", response_code!="409"}[1h]))
        > ${var.ingest_error_threshold}
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: ingest failures"
    content   = <<-EOT
      Files from gs://${local.buckets.landing.name} are failing to load. Find them in the ${local.functions.IngestCSV.service} logs
      (severity ERROR; the object and reason are in each line) and in the ledger (state FAILED).
      Non-2xx answers are retried by Eventarc for 24 h and, after that, picked up by ${local.functions.SweepLanding.service}
      within ${var.sweep.window}; a permanent failure is not retried: fix the cause (an ERP export change, a schema
      change), then re-run the file with alpipe backfill. Re-running is safe: the ledger loads each generation once.
    EOT
  }
}

# "No file left behind": the sweeper only finds files whose events all
# failed (an outage of a day, a bad deploy). It loads them, but something
# upstream is broken: say so once per finding. A sweeper that stops
# reporting would leave that gap unwatched, so its silence alerts too.
resource "google_monitoring_alert_policy" "sweeper_findings" {
  display_name          = "alpipe: sweeper found files missed by their events"
  combiner              = "OR"
  severity              = "WARNING"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Objects found by the sweeper in the last 30 min > 0"

    condition_prometheus_query_language {
      # 30 min spans two runs: one finding opens one incident, which closes
      # on its own once the runs find nothing again.
      query               = <<-EOT
        sum(increase(${local.promql.sweep_found}_sum{monitored_resource="cloud_run_revision"}[30m])) > 0
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  conditions {
    display_name = "No sweeper run reported for 1 h"

    condition_prometheus_query_language {
      query               = <<-EOT
        absent_over_time(${local.promql.sweep_found}_count{monitored_resource="cloud_run_revision"}[1h])
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: files loaded only by the sweeper"
    content   = <<-EOT
      ${local.functions.SweepLanding.service} found landing files older than ${var.sweep.grace} without a final ledger record:
      every Eventarc delivery of them failed or was lost. The sweeper ingests them (its "sweep finished" log line
      counts found, ingested, failed and skipped); check that they loaded, then find why the events failed:
      ${local.functions.IngestCSV.service} down or failing (see "alpipe: ingest failures"), the Eventarc trigger
      ${local.functions.IngestCSV.service}-finalized deleted or its identity without run.invoker.
      If the condition is "no sweeper run reported": check the Cloud Scheduler job ${local.functions.SweepLanding.service}
      (paused? failing with 403/5xx?) and the ${local.functions.SweepLanding.service} logs.
    EOT
  }
}

# "Did the ERP change its export?" A column no contract declares is dropped
# from the load; say so the day it first appears, once per column: the
# condition holds only while the column is new (seen in the last hour, not
# in the week before), so a column that keeps coming does not page again.
resource "google_monitoring_alert_policy" "schema_drift" {
  display_name          = "alpipe: new column in an ERP export"
  combiner              = "OR"
  severity              = "WARNING"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Column added to a feed's files, first seen in the last hour"

    condition_prometheus_query_language {
      query               = <<-EOT
        sum by (feed, column) (increase(${local.promql.schema_drift}{monitored_resource="cloud_run_revision", change="added"}[1h])) > 0
        unless
        sum by (feed, column) (increase(${local.promql.schema_drift}{monitored_resource="cloud_run_revision", change="added"}[7d] offset 1h)) > 0
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: new column in an ERP export"
    content   = <<-EOT
      Files of feed $${metric.label.feed} carry a column the contract does not declare: $${metric.label.column}.
      The files still load the declared columns; this one is not loaded. The ledger record of each file
      (alpipe status, field drift) lists added and missing columns. Declare the column in the feed's
      contract (and the table) if it is wanted, or set on_unknown_columns to reject for feeds that must stop.
    EOT
  }
}

# "Is every hourly number going to be final?" A window the tick cannot
# process does not stop the others (the tick answers 2xx), so neither the
# watermark nor the request metrics show it: its own log line does. Every
# tick logs every failing window again, so the condition holds until it is
# fixed. State layout 3 keeps state per window, so what the operator reads
# says "windows"; the resource name and the metric it counts
# (tick_failing_cells, log field failing_cell) keep the "cells" of layouts
# 1 and 2, since renaming them would break the dashboards, alerts and log
# queries that already refer to them.
resource "google_monitoring_alert_policy" "failing_cells" {
  display_name          = "alpipe: windows the tick cannot process"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Failing-window lines in the last 15 min, per aggregation"

    condition_prometheus_query_language {
      query               = <<-EOT
        sum by (aggregation) (increase(${local.promql.failing_cells}{monitored_resource="cloud_run_revision"}[15m])) > 0
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: a window cannot be processed"
    content   = <<-EOT
      The tick of aggregation $${metric.label.aggregation} skips one or more windows whose state it cannot read or add up;
      every other window still gets its panes and expires. The failing window keeps its orders (new ones are parked
      until it reads again) and owes its panes: nothing is dropped, but its numbers stay stale until fixed.
      Which window and why: the ${local.functions.AdvanceWatermark.service} logs (message "window failing; the other
      windows were processed and the next tick retries it", fields failing_cell (the window's state document),
      window_start and error), the AdvanceWatermark answer (Failing) and the local dashboard (Failing windows).
      "state layout N found, this binary reads layout M": a binary of another state layout is serving (a rollback
      or a mixed deploy): deploy the matching revision. A decode error or "measure out of range": repair or remove the
      named document in Firestore (database ${var.firestore_database}); the next tick emits the window's owed panes.
    EOT
  }
}

# "Are the daily figures complete?" A (date, SKU) whose sum its column
# cannot hold is left out of the daily aggregate while the file loads DONE
# and every other group is refreshed: only its "refresh overflow" line says
# so. One incident per date, SKU and column; it holds while files of that
# date keep reporting it, and closes on its own a day after the last.
resource "google_monitoring_alert_policy" "refresh_overflow" {
  display_name          = "alpipe: daily sum out of range"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.alert_notification_channels

  conditions {
    display_name = "Daily sums left out of range in the last hour, per date, SKU and column"

    condition_prometheus_query_language {
      query               = <<-EOT
        sum by (aggregate, date, sku, column) (increase(${local.promql.refresh_overflow}{monitored_resource="cloud_run_revision"}[1h])) > 0
      EOT
      duration            = "0s"
      evaluation_interval = "300s"
    }
  }

  alert_strategy {
    auto_close = "86400s"
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "alpipe: daily sum out of range"
    content   = <<-EOT
      The $${metric.label.column} of SKU $${metric.label.sku} on $${metric.label.date} adds up past what its column of
      $${metric.label.aggregate} holds (NUMERIC: ±99999999999999999999999999999.999999999; INT64), so that group is
      missing from $${metric.label.aggregate}; every other SKU and date is refreshed and the files loaded DONE.
      The sum is in the ${local.functions.IngestCSV.service} logs (message "refresh overflow", field sum), and
      alpipe status lists each such file (DONE, with the reason). Find the order lines of that date and SKU in
      lineas_pedido (an amount in the wrong unit, a corrupt export), correct the source file and upload it again:
      its newest generation replaces the old rows and the next refresh puts the group back.
    EOT
  }
}
