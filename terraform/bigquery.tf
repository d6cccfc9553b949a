# The analytics dataset. Table schemas are NOT written here: they are read
# from internal/warehouse/schema/<table>.json, the single source of truth the
# Go code embeds, and a test (test/deploy) checks that every table below
# matches warehouse.Lookup: same schema file, partitioning and clustering.

resource "google_bigquery_dataset" "analytics" {
  dataset_id  = var.dataset_id
  location    = var.region
  description = "AlpinaShop analytics: ERP order lines and reviews (alpipe ingest), daily SKU sales, hourly sales panes per country and dropped orders (alpipe stream)."

  # A destroy must never take the data with it.
  delete_contents_on_destroy = false
  # Seven days of time travel: undo a bad replay or a wrong partition rewrite.
  max_time_travel_hours = "168"

  lifecycle {
    prevent_destroy = true
  }
}

locals {
  schema_dir = "${path.module}/../internal/warehouse/schema"

  # Layout as declared in internal/warehouse/tables.go (checked by test).
  tables = {
    lineas_pedido = {
      description = "Clean ERP order lines, appended once per source file generation (load jobs)."
      partition   = "fecha"
      clustering  = ["sku"]
    }
    opiniones = {
      description = "Product reviews from the monthly ERP export."
      partition   = "fecha"
      clustering  = ["sku"]
    }
    ventas_diarias_sku = {
      description = "Units, amount and lines per day and SKU, rebuilt per touched day (partition overwrite)."
      partition   = "fecha"
      clustering  = ["sku"]
    }
    ventas_hora_pais_paneles = {
      description = "Every pane (EARLY, ON_TIME, LATE) of the hourly sales per country, identity (aggregation, window_start, pais, pane_index). Read through the ventas_hora_pais view."
      partition   = "window_start"
      clustering  = ["pais"]
    }
    pedidos_descartados = {
      description = "Orders dropped from the aggregation: invalid messages and orders past allowed lateness, with reason, window and watermark."
      partition   = "received_at"
      clustering  = ["reason"]
    }
  }
}

resource "google_bigquery_table" "table" {
  for_each = local.tables

  dataset_id          = google_bigquery_dataset.analytics.dataset_id
  table_id            = each.key
  description         = each.value.description
  deletion_protection = var.deletion_protection

  schema = file("${local.schema_dir}/${each.key}.json")

  time_partitioning {
    type  = "DAY"
    field = each.value.partition
  }

  clustering = each.value.clustering

  # The analytics history. A change BigQuery can only make by re-creating a
  # table (another partitioning, a narrowed schema) fails the plan here
  # instead of dropping the data; such a change is a migration (copy, then
  # swap), not an apply.
  lifecycle {
    prevent_destroy = true
  }
}

# Current value per window and country, for the dashboard. The definition
# depends on the accumulation mode the stream services run with (the same
# var.stream.accumulation): ACCUMULATING keeps the latest pane, DISCARDING
# sums the panes. Both first drop re-written copies of a pane (streaming
# inserts deduplicate only on a best-effort basis), so nothing is counted
# twice.
resource "google_bigquery_table" "ventas_hora_pais" {
  dataset_id          = google_bigquery_dataset.analytics.dataset_id
  table_id            = "ventas_hora_pais"
  description         = "Current sales per hour and country (${lower(var.stream.accumulation)} panes), with the timing and index of the latest pane: ON_TIME or LATE means final for now."
  deletion_protection = var.deletion_protection

  view {
    query = templatefile("${path.module}/sql/ventas_hora_pais_${lower(var.stream.accumulation)}.sql", {
      project = var.project_id
      dataset = google_bigquery_dataset.analytics.dataset_id
      panes   = google_bigquery_table.table["ventas_hora_pais_paneles"].table_id
    })
    use_legacy_sql = false
  }
}
