# One dashboard for the questions in the business context: did the files
# load (or fail, or need the sweeper), how many rows were rejected and why, is
# the stream on time, how many orders it accepts, are orders dropped or
# dead-lettered, which errors were logged. The layout is a JSON file
# (dashboards/); only names that come from variables are filled in.
resource "google_monitoring_dashboard" "alpipe" {
  dashboard_json = templatefile("${path.module}/dashboards/alpipe.json.tftpl", {
    metric_prefix           = local.promql_prefix
    files_metric            = replace(google_logging_metric.ingest_files.name, "/", "_")
    rows_read_metric        = replace(google_logging_metric.ingest_rows["ingest_rows_read"].name, "/", "_")
    rows_loaded_metric      = replace(google_logging_metric.ingest_rows["ingest_rows_loaded"].name, "/", "_")
    rows_quarantined_metric = replace(google_logging_metric.ingest_rows["ingest_rows_quarantined"].name, "/", "_")
    rejected_metrics        = { for code, m in google_logging_metric.ingest_rows_rejected : code => replace(m.name, "/", "_") }
    accepted_metric         = replace(google_logging_metric.orders_accepted.name, "/", "_")
    late_dropped_metric     = replace(google_logging_metric.orders_late_dropped.name, "/", "_")
    invalid_metric          = replace(google_logging_metric.orders_invalid.name, "/", "_")
    watermark_lag_metric    = replace(google_logging_metric.watermark_lag.name, "/", "_")
    ingest_failed_metric    = replace(google_logging_metric.ingest_failed.name, "/", "_")
    schema_drift_metric     = replace(google_logging_metric.schema_drift.name, "/", "_")
    failing_cells_metric    = replace(google_logging_metric.tick_failing_cells.name, "/", "_")
    refresh_overflow_metric = replace(google_logging_metric.refresh_overflow.name, "/", "_")
    # The metric exists only with tick_interval = "30s" (tasks.tf); the tile
    # stays empty otherwise.
    tick_follow_up_metric = "alpipe_tick_follow_up_failed"
    sweep_metrics         = { for k, m in google_logging_metric.sweep : replace(k, "sweep_", "") => replace(m.name, "/", "_") }
    ingest_service        = local.functions.IngestCSV.service
    push_subscription     = "${var.orders_topic}-${local.functions.AggregateOrders.service}"
    dead_letter_sub       = google_pubsub_subscription.dead_letter.name
    error_logs            = "${local.run_logs} AND resource.labels.service_name=(${join(" OR ", [for f in values(local.functions) : "\"${f.service}\""])}) AND severity>=ERROR"
  })
}
