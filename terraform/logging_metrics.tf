# Log-based metrics from the structured JSON logs (log/slog, one line per
# ingested file, one per order and aggregation, one per tick, one per
# sweep). Field names are the log contract: feed, state, rows_read,
# rows_loaded, rows_quarantined, rejects (code -> count), reason,
# aggregation, watermark_lag_seconds; message, found, ingested, failed,
# skipped; on AggregateOrders' "order handled" lines, fate, and on its
# dead-letter lines, duplicate; on the "schema drift" lines of the
# ingester, column and change (added, missing); and on its "refresh
# overflow" lines, aggregate, date, sku, column and sum.

locals {
  run_logs = "resource.type=\"cloud_run_revision\""

  # Files are ingested by IngestCSV and, when their events were lost, by
  # SweepLanding through the same code: both services' lines count.
  ingest_logs = "${local.run_logs} AND resource.labels.service_name=(\"${local.functions.IngestCSV.service}\" OR \"${local.functions.SweepLanding.service}\")"

  orders_logs          = "${local.run_logs} AND resource.labels.service_name=\"${local.functions.AggregateOrders.service}\""
  order_handled_filter = "${local.orders_logs} AND jsonPayload.message=\"order handled\""

  # The line that closes a file carries its counts.
  ingest_file_filter = "${local.ingest_logs} AND jsonPayload.rows_read:*"

  # The line that closes a sweeper run: {"message": "sweep finished",
  # "found": n, "ingested": n, "failed": n, "skipped": n}.
  sweep_filter = "${local.run_logs} AND resource.labels.service_name=\"${local.functions.SweepLanding.service}\" AND jsonPayload.message=\"sweep finished\""

  sweep_metrics = {
    sweep_found = {
      field       = "jsonPayload.found"
      description = "Landing objects a sweeper run found without a final ledger record after the grace period: files whose Eventarc events were all lost. Should be 0."
    }
    sweep_ingested = {
      field       = "jsonPayload.ingested"
      description = "Objects a sweeper run ingested (of those found)."
    }
    sweep_failed = {
      field       = "jsonPayload.failed"
      description = "Objects a sweeper run failed to ingest; the next run tries them again."
    }
    sweep_skipped = {
      field       = "jsonPayload.skipped"
      description = "Objects a sweeper run found but did not attempt: claimed by a live attempt, over SWEEP_MAX_OBJECTS, or the run was cancelled; a later run takes them."
    }
  }

  ingest_row_metrics = {
    ingest_rows_read = {
      field       = "jsonPayload.rows_read"
      description = "Rows read per ingested file (header excluded), by feed."
    }
    ingest_rows_loaded = {
      field       = "jsonPayload.rows_loaded"
      description = "Rows loaded into the warehouse per ingested file, by feed."
    }
    ingest_rows_quarantined = {
      field       = "jsonPayload.rows_quarantined"
      description = "Rows sent to quarantine per ingested file, by feed. rows_read = rows_loaded + rows_quarantined."
    }
  }

  # A file's row counts span 0 to a few million: powers of two up to 2^31.
  row_buckets = {
    num_finite_buckets = 32
    growth_factor      = 2
    scale              = 1
  }

  # PromQL names of log-based metrics: logging.googleapis.com/user/<name>
  # with '/' mapped to '_' (Cloud Monitoring's PromQL naming rule).
  promql_prefix = "logging_googleapis_com:user_"
}

resource "google_logging_metric" "ingest_rows" {
  for_each = local.ingest_row_metrics

  name        = "alpipe/${each.key}"
  description = each.value.description
  filter      = local.ingest_file_filter

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "alpipe ${replace(each.key, "_", " ")}"

    labels {
      key         = "feed"
      value_type  = "STRING"
      description = "Data contract (feed) of the file."
    }
  }

  value_extractor  = "EXTRACT(${each.value.field})"
  label_extractors = { feed = "EXTRACT(jsonPayload.feed)" }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = local.row_buckets.num_finite_buckets
      growth_factor      = local.row_buckets.growth_factor
      scale              = local.row_buckets.scale
    }
  }
}

# Rejected rows by feed and reason: `rejects` is a map from reason code to
# count, and a log-based metric extracts one field, so each code gets its own
# metric. Codes such as "fecha:invalid_date" contain a colon: the field path
# quotes them, and the metric name spells the colon "__" (metric names may
# not contain one).
resource "google_logging_metric" "ingest_rows_rejected" {
  for_each = toset(var.reject_codes)

  name        = "alpipe/ingest_rows_rejected_${replace(each.key, ":", "__")}"
  description = "Rows rejected with reason code ${each.key} per ingested file, by feed."
  filter      = "${local.ingest_file_filter} AND jsonPayload.rejects.\"${each.key}\":*"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "alpipe rows rejected (${each.key})"

    labels {
      key         = "feed"
      value_type  = "STRING"
      description = "Data contract (feed) of the file."
    }
  }

  value_extractor  = "EXTRACT(jsonPayload.rejects.\"${each.key}\")"
  label_extractors = { feed = "EXTRACT(jsonPayload.feed)" }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = local.row_buckets.num_finite_buckets
      growth_factor      = local.row_buckets.growth_factor
      scale              = local.row_buckets.scale
    }
  }
}

resource "google_logging_metric" "ingest_files" {
  name        = "alpipe/ingest_files"
  description = "Ingested file generations by feed and final ledger state (DONE, REJECTED, DUPLICATE, SKIPPED, ...)."
  filter      = local.ingest_file_filter

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe files ingested"

    labels {
      key         = "feed"
      value_type  = "STRING"
      description = "Data contract (feed) of the file; empty when no contract matched."
    }

    labels {
      key         = "state"
      value_type  = "STRING"
      description = "Ledger state the attempt ended in."
    }
  }

  label_extractors = {
    feed  = "EXTRACT(jsonPayload.feed)"
    state = "EXTRACT(jsonPayload.state)"
  }
}

# The fate of each order in each aggregation, from AggregateOrders' "order
# handled" line (internal/stream/handle.go): accepted orders (the
# throughput), and orders dropped because their window had expired; and
# messages that were not valid orders (reason "invalid: ..."), dead-lettered
# and written to pedidos_descartados.
resource "google_logging_metric" "orders_accepted" {
  name        = "alpipe/orders_accepted"
  description = "Orders counted in a window, by aggregation (one per order and aggregation): the stream's throughput."
  filter      = "${local.order_handled_filter} AND jsonPayload.fate=\"accepted\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe orders accepted"

    labels {
      key         = "aggregation"
      value_type  = "STRING"
      description = "Aggregation that counted the order."
    }
  }

  label_extractors = { aggregation = "EXTRACT(jsonPayload.aggregation)" }
}

# The order's fate, not the pedidos_descartados reason (also too_late): the
# log line carries only the fate.
resource "google_logging_metric" "orders_late_dropped" {
  name        = "alpipe/orders_late_dropped"
  description = "Orders that arrived after their window's allowed lateness and were dropped from the aggregation (late_dropped)."
  filter      = "${local.order_handled_filter} AND jsonPayload.fate=\"too_late\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe orders dropped too late"

    labels {
      key         = "aggregation"
      value_type  = "STRING"
      description = "Aggregation whose window had expired."
    }
  }

  label_extractors = { aggregation = "EXTRACT(jsonPayload.aggregation)" }
}

resource "google_logging_metric" "orders_invalid" {
  name        = "alpipe/orders_invalid"
  description = "Pub/Sub messages that were not valid orders (bad JSON, missing pedido_id or momento_evento, bad amount or country), each counted once."
  # A redelivery of a message already dead-lettered logs again with
  # duplicate=true: counting it would count one bad message many times.
  filter = "${local.orders_logs} AND jsonPayload.reason=~\"^invalid\" AND NOT jsonPayload.duplicate=true"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe invalid order messages"
  }
}

resource "google_logging_metric" "watermark_lag" {
  name        = "alpipe/watermark_lag_seconds"
  description = "now - watermark at each AdvanceWatermark tick, per aggregation. Healthy: about out_of_orderness plus one tick."
  filter      = "${local.run_logs} AND resource.labels.service_name=\"${local.functions.AdvanceWatermark.service}\" AND jsonPayload.watermark_lag_seconds:*"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "s"
    display_name = "alpipe watermark lag"

    labels {
      key         = "aggregation"
      value_type  = "STRING"
      description = "Aggregation whose watermark was advanced."
    }
  }

  value_extractor  = "EXTRACT(jsonPayload.watermark_lag_seconds)"
  label_extractors = { aggregation = "EXTRACT(jsonPayload.aggregation)" }

  bucket_options {
    explicit_buckets {
      bounds = [60, 300, 600, 660, 720, 900, 1200, 1800, 3600, 7200, 14400, 86400]
    }
  }
}

# An attempt that ended FAILED for good (a permanent error: not retried, the
# file waits for alpipe backfill) answers 2xx, so it shows in no request
# metric: count its log line. Transient failures answer non-2xx and are
# counted by Cloud Run's request_count (alerts.tf).
resource "google_logging_metric" "ingest_failed" {
  name        = "alpipe/ingest_failed"
  description = "File attempts that ended FAILED without a retry (permanent errors), by feed. Each needs a fix and alpipe backfill."
  filter      = "${local.ingest_logs} AND severity>=ERROR AND (jsonPayload.state=\"FAILED\" OR jsonPayload.reason=~\"^permanent\")"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe files failed permanently"

    labels {
      key         = "feed"
      value_type  = "STRING"
      description = "Data contract (feed) of the file; empty when the failure came before a contract matched."
    }
  }

  label_extractors = { feed = "EXTRACT(jsonPayload.feed)" }
}

# One value per sweeper run and count: found > 0 means files were missed by
# their events and only the sweeper loaded them (alerts.tf).
resource "google_logging_metric" "sweep" {
  for_each = local.sweep_metrics

  name        = "alpipe/${each.key}"
  description = each.value.description
  filter      = local.sweep_filter

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "alpipe ${replace(each.key, "_", " ")}"
  }

  value_extractor = "EXTRACT(${each.value.field})"

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 16
      growth_factor      = 2
      scale              = 1
    }
  }
}

# Schema drift: the ingester logs one "schema drift" line per column a file's
# header adds to its contract (not loaded) or lacks (loaded as NULL), on the
# file's first delivery only, so this counts files per drifted column.
resource "google_logging_metric" "schema_drift" {
  name        = "alpipe/schema_drift"
  description = "Files whose header added a column the contract does not declare (its data is not loaded) or lacked a declared one, by feed, column and change."
  filter      = "${local.ingest_logs} AND jsonPayload.message=\"schema drift\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe schema drift"

    labels {
      key         = "feed"
      value_type  = "STRING"
      description = "Data contract (feed) of the file."
    }

    labels {
      key         = "column"
      value_type  = "STRING"
      description = "Header column name as the file wrote it (added), or the declared name (missing)."
    }

    labels {
      key         = "change"
      value_type  = "STRING"
      description = "added or missing."
    }
  }

  label_extractors = {
    feed   = "EXTRACT(jsonPayload.feed)"
    column = "EXTRACT(jsonPayload.column)"
    change = "EXTRACT(jsonPayload.change)"
  }
}

# A window whose state the tick cannot read or add up (a document that does
# not decode, state of another state layout, a sum out of range) is skipped
# and reported, its new orders parked, and the tick answers 2xx for the other
# windows, so it shows in no request metric: count the "window failing"
# lines (field failing_cell: the window's state document), one per failing
# window and tick. The tick retries the window every time. The metric's
# name (alpipe/tick_failing_cells) and the log field it filters on
# (failing_cell) keep the "cells" of state layouts 1 and 2, which reported
# (window, key) cells: renaming either would break the dashboards, alert
# policies and saved log queries that already refer to them. What the
# operator reads (description, display name) says "windows".
resource "google_logging_metric" "tick_failing_cells" {
  name        = "alpipe/tick_failing_cells"
  description = "Windows a tick could not process, one per window and tick, by aggregation. Each waits, its data kept (new orders parked), until its state is repaired or the right binary runs."
  filter      = "${local.run_logs} AND resource.labels.service_name=\"${local.functions.AdvanceWatermark.service}\" AND severity>=ERROR AND jsonPayload.failing_cell:*"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe failing windows"

    labels {
      key         = "aggregation"
      value_type  = "STRING"
      description = "Aggregation of the failing window."
    }
  }

  label_extractors = { aggregation = "EXTRACT(jsonPayload.aggregation)" }
}

# A daily aggregate's sum out of its column's range (NUMERIC, INT64): the
# refresh leaves that (date, SKU) group out of the aggregate, refreshes every
# other one, and the file still ends DONE (its rows are loaded), so neither
# the failure metrics nor the request metrics see it. The ingester logs one
# "refresh overflow" line per sum and refresh, and every later file of that
# date logs it again while its rows stay as they are: few series, each of a
# date and SKU that a person must look at.
resource "google_logging_metric" "refresh_overflow" {
  name        = "alpipe/refresh_overflow"
  description = "Sums of a daily aggregate out of their column's range at a refresh, by aggregate, date, SKU and column: that group is missing from the aggregate until its source rows are corrected."
  filter      = "${local.ingest_logs} AND severity>=ERROR AND jsonPayload.message=\"refresh overflow\""

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "alpipe daily sums out of range"

    labels {
      key         = "aggregate"
      value_type  = "STRING"
      description = "Daily aggregate table (ventas_diarias_sku)."
    }

    labels {
      key         = "date"
      value_type  = "STRING"
      description = "Date (YYYY-MM-DD) of the group left out."
    }

    labels {
      key         = "sku"
      value_type  = "STRING"
      description = "SKU of the group left out."
    }

    labels {
      key         = "column"
      value_type  = "STRING"
      description = "Measure whose sum is out of range (importe, unidades)."
    }
  }

  label_extractors = {
    aggregate = "EXTRACT(jsonPayload.aggregate)"
    date      = "EXTRACT(jsonPayload.date)"
    sku       = "EXTRACT(jsonPayload.sku)"
    column    = "EXTRACT(jsonPayload.column)"
  }
}
