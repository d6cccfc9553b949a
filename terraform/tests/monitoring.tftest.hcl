# The log-based metrics, the dashboard and the alert policies, planned by
# Terraform against a mock of the google provider (see
# deployment.tftest.hcl). With tick_interval = "30s", so that the follow-up
# metric of tasks.tf, which the dashboard charts, exists. Every
# google_logging_metric and google_monitoring_alert_policy of the module must
# be named below: test/deploy (TestMonitoringIsAllChecked) fails otherwise.
#
# The assertions bind shared values with a one-element for expression
# ([for metrics in [...] : ...]): a run block has no locals. metrics maps
# each metric's PromQL name (alpipe_x for alpipe/x) to its resource.

mock_provider "google" {
  mock_data "google_project" {
    defaults = { number = "123456789012" }
  }
  mock_data "google_storage_project_service_account" {
    defaults = {
      email_address = "service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
      member        = "serviceAccount:service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
    }
  }
  # The tick's follow-up checks its invoker's email (tasks.tf).
  mock_resource "google_service_account" {
    defaults = {
      email  = "alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
      member = "serviceAccount:alpipe-watermark@alpipe-dev-example.iam.gserviceaccount.com"
      name   = "projects/alpipe-dev-example/serviceAccounts/alpipe-watermark-tick@alpipe-dev-example.iam.gserviceaccount.com"
    }
  }
}

variables {
  project_id                  = "alpipe-dev-example"
  environment                 = "dev"
  alert_notification_channels = ["projects/alpipe-dev-example/notificationChannels/1"]
  image                       = "europe-west1-docker.pkg.dev/alpipe-dev-example/alpipe/server@sha256:0000000000000000000000000000000000000000000000000000000000000000"
  tick_interval               = "30s"
}

run "monitoring" {
  command = plan

  # --- The metrics read the fields the services log (a renamed field would
  # silently chart nothing), each from one Cloud Run service's logs.
  assert {
    condition = alltrue([for metrics in [{ for m in concat(
      values(google_logging_metric.ingest_rows), values(google_logging_metric.ingest_rows_rejected), values(google_logging_metric.sweep),
      [google_logging_metric.ingest_files, google_logging_metric.orders_accepted, google_logging_metric.orders_late_dropped, google_logging_metric.orders_invalid,
        google_logging_metric.watermark_lag, google_logging_metric.ingest_failed, google_logging_metric.schema_drift,
      google_logging_metric.tick_failing_cells, google_logging_metric.refresh_overflow],
      google_logging_metric.tick_follow_up_failed,
      ) : replace(m.name, "/", "_") => m }] : alltrue([for fields in [{ for k, m in metrics : k => distinct(flatten([
        for s in concat([m.filter, m.value_extractor == null ? "" : m.value_extractor], m.label_extractors == null ? [] : values(m.label_extractors)) : regexall("jsonPayload\\.([a-z_]+)", s)
      ])) }] : (
      sort(distinct(flatten(values(fields)))) == sort([
        "feed", "state", "rows_read", "rows_loaded", "rows_quarantined", "rejects", "reason", "aggregation",
        "watermark_lag_seconds", "message", "found", "ingested", "failed", "skipped",
        "column", "change",         # the "schema drift" line of internal/ingest
        "failing_cell",             # the "window failing" line of internal/stream's tick
        "fate", "duplicate",        # the "order handled" and "message dead-lettered" lines of internal/stream
        "aggregate", "date", "sku", # the "refresh overflow" line of internal/ingest (with column)
      ]) &&
      alltrue([for m in metrics : strcontains(m.filter, "resource.type=\"cloud_run_revision\"") && strcontains(m.filter, "resource.labels.service_name=")])
    )])])
    error_message = "The log-based metrics must read exactly the fields of the log contract, each from one Cloud Run service's logs."
  }

  # --- The dashboard is valid JSON whose tiles fit, have a title and a
  # query, read only defined metrics (a distribution with _sum, _count or
  # _bucket, a counter without), and chart every metric.
  assert {
    condition = alltrue([for metrics in [{ for m in concat(
      values(google_logging_metric.ingest_rows), values(google_logging_metric.ingest_rows_rejected), values(google_logging_metric.sweep),
      [google_logging_metric.ingest_files, google_logging_metric.orders_accepted, google_logging_metric.orders_late_dropped, google_logging_metric.orders_invalid,
        google_logging_metric.watermark_lag, google_logging_metric.ingest_failed, google_logging_metric.schema_drift,
      google_logging_metric.tick_failing_cells, google_logging_metric.refresh_overflow],
      google_logging_metric.tick_follow_up_failed,
      ) : replace(m.name, "/", "_") => m.metric_descriptor[0].value_type == "DISTRIBUTION" }] :
      alltrue([for dash in [jsondecode(google_monitoring_dashboard.alpipe.dashboard_json)] : (
        dash.displayName != "" && length(dash.mosaicLayout.tiles) > 0 &&
        alltrue([for tile in dash.mosaicLayout.tiles : (
          tile.widget.title != "" && tile.xPos + tile.width <= dash.mosaicLayout.columns && try(tile.widget.logsPanel.filter != "",
          length(tile.widget.xyChart.dataSets) > 0 && alltrue([for ds in tile.widget.xyChart.dataSets : ds.timeSeriesQuery.prometheusQuery != ""]))
        )]) &&
        alltrue([for refs in [concat([for tile in dash.mosaicLayout.tiles : concat([], [for ds in try(tile.widget.xyChart.dataSets, []) :
          regexall("logging_googleapis_com:user_([A-Za-z0-9_]+?)(_sum|_count|_bucket)?\\{", ds.timeSeriesQuery.prometheusQuery)
          ]...)]...)] : (
          alltrue([for ref in refs : contains(keys(metrics), ref[0]) && (ref[1] != null) == lookup(metrics, ref[0], false)]) &&
          sort(distinct([for ref in refs : ref[0]])) == sort(keys(metrics))
        )])
    )])])
    error_message = "The dashboard must be valid, its tiles titled, within the columns and with queries; its queries must read defined metrics with the right suffix, and chart every metric."
  }

  # --- Dataflow's questions on the dashboard: orders accepted per minute
  # (from the "order handled" lines of accepted orders) and an error panel
  # showing every alpipe service's ERROR lines.
  assert {
    condition = alltrue([for dash in [jsondecode(google_monitoring_dashboard.alpipe.dashboard_json)] : (
      strcontains(google_logging_metric.orders_accepted.filter, "jsonPayload.message=\"order handled\" AND jsonPayload.fate=\"accepted\"") &&
      strcontains(google_logging_metric.orders_accepted.filter, "service_name=\"alpipe-orders\"") &&
      length([for tile in dash.mosaicLayout.tiles : tile if can(regex("^60 \\* sum by \\(aggregation\\) \\(rate\\(logging_googleapis_com:user_alpipe_orders_accepted\\{",
      tile.widget.xyChart.dataSets[0].timeSeriesQuery.prometheusQuery))]) == 1 &&
      alltrue([for panels in [[for tile in dash.mosaicLayout.tiles : tile.widget.logsPanel.filter if can(tile.widget.logsPanel.filter)]] : (
        length(panels) == 1 && strcontains(panels[0], "severity>=ERROR") && strcontains(panels[0], "resource.type=\"cloud_run_revision\"") &&
        alltrue([for s in ["alpipe-ingest", "alpipe-orders", "alpipe-watermark", "alpipe-sweeper"] : strcontains(panels[0], "\"${s}\"")])
      )])
    )])
    error_message = "The dashboard must chart orders_accepted (\"order handled\", fate accepted) per minute by aggregation, and have one logsPanel of the alpipe services' severity>=ERROR lines."
  }

  # --- Each bad message counts once in orders_invalid, however often
  # Pub/Sub redelivers it; too-late drops are read from the order's fate.
  assert {
    condition = (
      strcontains(google_logging_metric.orders_invalid.filter, "AND NOT jsonPayload.duplicate=true") &&
      strcontains(google_logging_metric.orders_late_dropped.filter, "jsonPayload.message=\"order handled\" AND jsonPayload.fate=\"too_late\"")
    )
    error_message = "orders_invalid must leave out redeliveries (jsonPayload.duplicate=true); orders_late_dropped must count \"order handled\" lines with fate too_late."
  }

  # --- Every alert notifies the channels, documents what to do, and reads
  # a log-based metric (correctly suffixed) or Cloud Run's request count;
  # the threshold condition watches the dead-letter subscription.
  assert {
    condition = alltrue([for metrics in [{ for m in concat(
      values(google_logging_metric.ingest_rows), values(google_logging_metric.ingest_rows_rejected), values(google_logging_metric.sweep),
      [google_logging_metric.ingest_files, google_logging_metric.orders_accepted, google_logging_metric.orders_late_dropped, google_logging_metric.orders_invalid,
        google_logging_metric.watermark_lag, google_logging_metric.ingest_failed, google_logging_metric.schema_drift,
      google_logging_metric.tick_failing_cells, google_logging_metric.refresh_overflow],
      google_logging_metric.tick_follow_up_failed,
      ) : replace(m.name, "/", "_") => m.metric_descriptor[0].value_type == "DISTRIBUTION" }] :
      alltrue([for p in [
        google_monitoring_alert_policy.dead_letter, google_monitoring_alert_policy.failing_cells,
        google_monitoring_alert_policy.ingest_failures, google_monitoring_alert_policy.refresh_overflow,
        google_monitoring_alert_policy.rejection_rate, google_monitoring_alert_policy.schema_drift,
        google_monitoring_alert_policy.sweeper_findings, google_monitoring_alert_policy.watermark_stalled,
        ] : (
        tolist(p.notification_channels) == tolist(var.alert_notification_channels) && length(p.documentation) == 1 &&
        length(p.conditions) > 0 && alltrue([for c in p.conditions : alltrue(concat(
          [for q in c.condition_prometheus_query_language : (
            can(regex("logging_googleapis_com:user_[A-Za-z0-9_]+\\{|run_googleapis_com:request_count\\{", q.query)) &&
            alltrue([for ref in regexall("logging_googleapis_com:user_([A-Za-z0-9_]+?)(_sum|_count|_bucket)?\\{", q.query) :
            contains(keys(metrics), ref[0]) && (ref[1] != null) == lookup(metrics, ref[0], false)])
          )],
          [for th in c.condition_threshold : strcontains(th.filter, "subscription_id = \"pedidos-nuevos-dlq-sub\"")],
        ))])
    )])])
    error_message = "Every alert policy needs var.alert_notification_channels, documentation and conditions reading defined metrics (or Cloud Run's request count, or the dead-letter subscription)."
  }

  # --- Ingest failures page on files FAILED for good and on non-2xx
  # answers of the ingest service (409, busy, excluded); the sweeper pages
  # when it finds a file and when it stops reporting.
  assert {
    condition = alltrue([for q in [join("\n", [for c in google_monitoring_alert_policy.ingest_failures.conditions : replace(c.condition_prometheus_query_language[0].query, "/\\s+/", " ")])] : (
      strcontains(q, "logging_googleapis_com:user_alpipe_ingest_failed{") && strcontains(q, "> 2") &&
      strcontains(q, "run_googleapis_com:request_count{monitored_resource=\"cloud_run_revision\", service_name=\"alpipe-ingest\", response_code_class!=\"2xx\", response_code!=\"409\"}")
    )])
    error_message = "ingest_failures must count ingest_failed and the ingest service's non-2xx answers except 409, above 2."
  }
  assert {
    condition = alltrue([for q in [join("\n", [for c in google_monitoring_alert_policy.sweeper_findings.conditions : replace(c.condition_prometheus_query_language[0].query, "/\\s+/", " ")])] : (
      strcontains(q, "increase(logging_googleapis_com:user_alpipe_sweep_found_sum{monitored_resource=\"cloud_run_revision\"}[30m])) > 0") &&
      strcontains(q, "absent_over_time(logging_googleapis_com:user_alpipe_sweep_found_count{")
    )])
    error_message = "sweeper_findings must page on a finding in 30 min and on the sweeper's silence."
  }
  # What the metrics count: permanent failures of both ingesting services,
  # the sweeper's findings from its "sweep finished" line, and the rows of
  # the files the sweeper ingests too.
  assert {
    condition = (
      strcontains(google_logging_metric.ingest_failed.filter, "\"alpipe-ingest\" OR \"alpipe-sweeper\"") &&
      strcontains(google_logging_metric.ingest_failed.filter, "severity>=ERROR") &&
      strcontains(google_logging_metric.ingest_failed.filter, "jsonPayload.reason=~\"^permanent\"") &&
      google_logging_metric.sweep["sweep_found"].value_extractor == "EXTRACT(jsonPayload.found)" &&
      alltrue([for m in google_logging_metric.sweep : strcontains(m.filter, "jsonPayload.message=\"sweep finished\"")]) &&
      strcontains(google_logging_metric.ingest_rows["ingest_rows_read"].filter, "\"alpipe-sweeper\"")
    )
    error_message = "ingest_failed must count permanent failures of alpipe-ingest and alpipe-sweeper; sweep_found must extract jsonPayload.found from the \"sweep finished\" line; row metrics must count the sweeper's files."
  }
}
