# The analytics dataset. Table schemas are NOT written here: they are read
# from internal/warehouse/schema/<table>.json, the single source of truth the
# Go code embeds (panes tables: built from ventas_hora_pais_paneles.json per
# declared aggregation), and a test (test/deploy) checks that every table
# below matches warehouse.Lookup: same schema, partitioning and clustering.

resource "google_bigquery_dataset" "analytics" {
  dataset_id  = var.dataset_id
  location    = var.region
  description = "AlpinaShop analytics: ERP order lines and reviews (alpipe ingest), daily SKU sales, the panes and views of the event-time aggregations and dropped orders (alpipe stream)."

  # A destroy takes the data with it in dev only (environment.tf).
  delete_contents_on_destroy = !local.production
  # Seven days of time travel: undo a bad replay or a wrong partition rewrite.
  max_time_travel_hours = "168"
}

locals {
  schema_dir = "${path.module}/../internal/warehouse/schema"

  # Layout as declared in internal/warehouse/tables.go (checked by test).
  tables = {
    lineas_pedido = {
      description = "Clean ERP order lines, appended once per source file generation (load jobs)."
      partition   = "fecha"
      clustering  = ["sku"]
      schema      = file("${local.schema_dir}/lineas_pedido.json")
    }
    opiniones = {
      description = "Product reviews from the monthly ERP export."
      partition   = "fecha"
      clustering  = ["sku"]
      schema      = file("${local.schema_dir}/opiniones.json")
    }
    ventas_diarias_sku = {
      description = "Units, amount and lines per day and SKU, rebuilt per touched day (partition overwrite)."
      partition   = "fecha"
      clustering  = ["sku"]
      schema      = file("${local.schema_dir}/ventas_diarias_sku.json")
    }
    pedidos_descartados = {
      description = "Orders dropped from an aggregation (invalid messages, and (order, window) pairs past allowed lateness), with reason, aggregation, window and watermark."
      partition   = "received_at"
      clustering  = ["reason"]
      schema      = file("${local.schema_dir}/pedidos_descartados.json")
    }
  }

  # The event-time aggregations, declared as data: one file per aggregation,
  # named after it, which the services embed (internal/aggregation) and
  # which alone decides which panes tables and views exist. Adding a file
  # adds a table and a view; a test (test/deploy) holds these to the Go
  # declarations and to internal/warehouse's tables and views.
  aggregation_dir = "${path.module}/../internal/aggregation/declarations"
  aggregations = {
    for f in fileset(local.aggregation_dir, "*.json") :
    trimsuffix(f, ".json") => jsondecode(file("${local.aggregation_dir}/${f}"))
  }

  # Every panes table is built as warehouse.PanesTable builds it: the
  # columns of ventas_hora_pais_paneles.json, the key column (pais there)
  # named after the aggregation's key, and the descriptions that depend on
  # the key from internal/aggregation/key_columns.json.
  panes_template     = jsondecode(file("${local.schema_dir}/ventas_hora_pais_paneles.json"))
  panes_template_key = "pais"
  key_columns        = jsondecode(file("${path.module}/../internal/aggregation/key_columns.json"))
  # A session aggregation's table also has merged_into (docs/event-time.md,
  # "Session windows"), after the template's columns.
  panes_columns = {
    windows = local.panes_template
    sessions = flatten([local.panes_template, [{
      name        = "merged_into"
      type        = "TIMESTAMP"
      mode        = "NULLABLE"
      description = "For a MERGED pane, the window_start of the session this one merged into; null otherwise."
    }]])
  }
  panes_tables = {
    for name, a in local.aggregations : "${name}_paneles" => {
      description = (a.window.type == "session"
        ? "Every pane (EARLY, ON_TIME, LATE, MERGED) of the aggregation ${name}, identity (aggregation, window_start, ${a.key}, pane_index); sessions of ${a.key} with a gap of ${a.window.gap}. Read through the ${name} view. ${a.description}"
      : "Every pane (EARLY, ON_TIME, LATE) of the aggregation ${name}, identity (aggregation, window_start, ${a.key}, pane_index); ${a.window.type} windows of ${lookup(a.window, "size", "")}${a.window.type == "sliding" ? " every ${lookup(a.window, "period", "")}" : ""}. Read through the ${name} view. ${a.description}")
      partition  = "window_start"
      clustering = [a.key]
      schema = jsonencode([for c in local.panes_columns[a.window.type == "session" ? "sessions" : "windows"] : merge(c, {
        name        = c.name == local.panes_template_key ? a.key : c.name
        description = lookup(local.key_columns[a.key], c.name == local.panes_template_key ? a.key : c.name, c.description)
      })])
    }
  }
}

resource "google_bigquery_table" "table" {
  for_each = merge(local.tables, local.panes_tables)

  dataset_id  = google_bigquery_dataset.analytics.dataset_id
  table_id    = each.key
  description = each.value.description
  # The analytics history. In prod, a change BigQuery can only make by
  # re-creating a table (another partitioning, a narrowed schema) fails the
  # plan (environment.tf) instead of dropping the data; such a change is a
  # migration (copy, then swap), not an apply.
  deletion_protection = local.production

  schema = each.value.schema

  time_partitioning {
    type  = "DAY"
    field = each.value.partition
  }

  clustering = each.value.clustering
}

# Current value per window and key of each aggregation, for the dashboard.
# The definition depends on the aggregation's declared accumulation mode:
# ACCUMULATING keeps the latest pane, DISCARDING sums the panes. Both first
# drop re-written copies of a pane (streaming inserts deduplicate only on a
# best-effort basis), so nothing is counted twice.
resource "google_bigquery_table" "view" {
  for_each = local.aggregations

  dataset_id          = google_bigquery_dataset.analytics.dataset_id
  table_id            = each.key
  description         = "Current value per window and ${each.value.key} (${lower(each.value.accumulation)} panes), with the timing and index of the latest pane: ON_TIME or LATE means final for now. ${each.value.description}"
  deletion_protection = local.production

  view {
    query = templatefile("${path.module}/sql/view_${lower(each.value.accumulation)}.sql", {
      project = var.project_id
      dataset = google_bigquery_dataset.analytics.dataset_id
      panes   = google_bigquery_table.table["${each.key}_paneles"].table_id
      key     = each.value.key
      # A session identity whose latest pane is MERGED no longer exists.
      session = each.value.window.type == "session"
    })
    use_legacy_sql = false
  }
}
