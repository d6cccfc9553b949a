# ---------------------------------------------------------------------------
# Project and placement
# ---------------------------------------------------------------------------

variable "project_id" {
  description = "Google Cloud project that hosts alpipe and the analytics dataset. No default: production's (alpinashop-datos) is set in env/prod.tfvars."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.project_id))
    error_message = "project_id must be a project ID (6-30 lower-case letters, digits and hyphens), not a project number or name."
  }
}

variable "environment" {
  description = "dev or prod, no default. prod: every object holding data is guarded against deletion and re-creation (a plan that would do either fails; environment.tf), the providers' and APIs' deletion protections are on, and alerts must notify someone (alert_notification_channels). dev: none of that, so that `terraform destroy` removes everything the module created; alerts may go nowhere, with a warning at every plan."
  type        = string

  validation {
    condition     = contains(["dev", "prod"], var.environment)
    error_message = "environment must be dev or prod."
  }
}

variable "name_prefix" {
  description = "First part of the names of the buckets the module names itself: name_prefix followed by -landing, -quarantine, -staging or -build. Bucket names are global, so the default is project_id; a *_bucket variable names that bucket instead."
  type        = string
  default     = null

  validation {
    condition     = var.name_prefix == null || can(regex("^[a-z0-9][a-z0-9-]{1,50}[a-z0-9]$", var.name_prefix))
    error_message = "name_prefix must be 3-52 lower-case letters, digits and hyphens (it starts bucket names)."
  }
}

variable "region" {
  description = "Region for every regional resource: buckets, Cloud Run, Eventarc, Scheduler, Artifact Registry, BigQuery and Firestore. The landing bucket and the Eventarc trigger must share it."
  type        = string
  default     = "europe-west1"

  validation {
    condition     = can(regex("^[a-z]+-[a-z]+[0-9]$", var.region))
    error_message = "region must be a single region such as europe-west1: Eventarc storage triggers need the bucket's region, not a multi-region."
  }
}

variable "image" {
  description = "Container image of cmd/server, pinned by digest (REGION-docker.pkg.dev/PROJECT/REPO/server@sha256:...). Needed only by an apply that creates a service (the first deployment, a new function, a re-creation): the pipeline rolls images forward (see run.tf), so for existing services it is ignored, and an apply without it plans no change to the services, triggers, push subscription or scheduler jobs. An apply that would create a service without it fails at plan (run.tf). scripts/deploy.sh passes the image the services run."
  type        = string
  default     = null
  nullable    = true

  validation {
    condition     = var.image == null || can(regex("^[a-z0-9.-]+(/[a-zA-Z0-9._-]+)+@sha256:[0-9a-f]{64}$", var.image))
    error_message = "image must be pinned by digest (...@sha256:<64 hex>), so that what runs is exactly what was built and tested."
  }
}

# ---------------------------------------------------------------------------
# Buckets
# ---------------------------------------------------------------------------

variable "landing_bucket" {
  description = "Bucket the ERP writes its CSV exports to (exportaciones/YYYY/MM/DD/*.csv). Versioned, so an overwritten export stays readable by the generation its event names. Empty (the default): name_prefix followed by -landing."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.landing_bucket == "" || can(regex("^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$", var.landing_bucket))
    error_message = "landing_bucket must be a valid bucket name without dots."
  }
}

variable "adopt_landing_bucket" {
  description = "true (production, env/prod.tfvars): landing_bucket already exists, the ERP writes to it, and the first apply imports it into Terraform instead of creating it (an import block in storage.tf; creating it would fail with 409). From then on Terraform manages its versioning, lifecycle rule, uniform bucket-level access and public access prevention, never empties it, and a plan that would delete it fails (environment.tf), in any environment. false: Terraform creates the bucket."
  type        = bool
  default     = false

  validation {
    # Adopting a name derived from the project would import whatever bucket
    # happens to have it.
    condition     = !var.adopt_landing_bucket || var.landing_bucket != ""
    error_message = "adopt_landing_bucket = true imports an existing bucket: name it with landing_bucket."
  }
}

variable "landing_prefixes" {
  description = "Object prefixes of landing_bucket that hold ERP exports (LANDING_PREFIXES, joined with commas). IngestCSV and SweepLanding load only objects under them; an event for any other object is logged and acknowledged."
  type        = list(string)
  default     = ["exportaciones/"]

  validation {
    condition     = length(var.landing_prefixes) > 0 && alltrue([for p in var.landing_prefixes : can(regex("^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/$", p))])
    error_message = "landing_prefixes must be a non-empty list of folder prefixes ending in '/', without commas, e.g. [\"exportaciones/\"]."
  }
}

variable "landing_noncurrent_version_days" {
  description = "Days an overwritten (noncurrent) export generation is kept. Long enough to finish any retry of its event (Eventarc retries for up to 24 h) and to compare with the newer export."
  type        = number
  default     = 30

  validation {
    condition     = var.landing_noncurrent_version_days >= 2 && floor(var.landing_noncurrent_version_days) == var.landing_noncurrent_version_days
    error_message = "landing_noncurrent_version_days must be a whole number of days, at least 2 (events are retried for up to 24 h)."
  }
}

variable "quarantine_bucket" {
  description = "Bucket for rejected rows: one object per source generation under quarantine_prefix, with line, reason and raw line. Empty (the default): name_prefix followed by -quarantine."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.quarantine_bucket == "" || can(regex("^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$", var.quarantine_bucket))
    error_message = "quarantine_bucket must be a valid bucket name without dots."
  }
}

variable "quarantine_prefix" {
  description = "Object prefix of quarantine files (QUARANTINE_PREFIX)."
  type        = string
  default     = "cuarentena/"

  validation {
    condition     = can(regex("^[a-z0-9_-]+/$", var.quarantine_prefix))
    error_message = "quarantine_prefix must be one path segment ending in '/'."
  }
}

variable "quarantine_retention_days" {
  description = "Days a quarantine file is kept before lifecycle deletion. It is a work list for people who fix and replay rows, not an archive: the source generation stays in the landing bucket and re-ingesting it rebuilds the file. 180 days spans two quarterly closes."
  type        = number
  default     = 180

  validation {
    condition     = var.quarantine_retention_days >= 30 && floor(var.quarantine_retention_days) == var.quarantine_retention_days
    error_message = "quarantine_retention_days must be a whole number of days, at least 30, so that a month-end fix still finds its rows."
  }
}

variable "staging_bucket" {
  description = "Bucket for the NDJSON files that BigQuery load jobs read (STAGING_BUCKET). Its objects are transient. Empty (the default): name_prefix followed by -staging."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.staging_bucket == "" || can(regex("^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$", var.staging_bucket))
    error_message = "staging_bucket must be a valid bucket name without dots."
  }
}

variable "staging_prefix" {
  description = "Object prefix of staged load files (STAGING_PREFIX)."
  type        = string
  default     = "staging/"

  validation {
    condition     = can(regex("^[a-z0-9_-]+/$", var.staging_prefix))
    error_message = "staging_prefix must be one path segment ending in '/'."
  }
}

variable "staging_retention_days" {
  description = "Backstop lifecycle deletion of staged files. The ingest deletes them after a successful load; this only sweeps what a crash left behind, and must outlive a load job plus its retries."
  type        = number
  default     = 2

  validation {
    condition     = contains([1, 2], var.staging_retention_days)
    error_message = "staging_retention_days must be 1 or 2: shorter could delete a file a running load job still reads, longer only pays for garbage."
  }
}

variable "build_bucket" {
  description = "Bucket for the source archives of builds submitted by hand (gcloud builds submit --gcs-source-staging-dir), readable by the deployer identity the pipeline runs as. Archives are deleted after a week. Empty (the default): name_prefix followed by -build."
  type        = string
  default     = ""
  nullable    = false

  validation {
    condition     = var.build_bucket == "" || can(regex("^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$", var.build_bucket))
    error_message = "build_bucket must be a valid bucket name without dots."
  }
}

# ---------------------------------------------------------------------------
# BigQuery and Firestore
# ---------------------------------------------------------------------------

variable "dataset_id" {
  description = "BigQuery dataset of the analytics tables (BIGQUERY_DATASET)."
  type        = string
  default     = "alpinashop_analitica"

  validation {
    # RE2, Terraform's regex engine, allows at most 1000 repetitions: the
    # length is checked apart.
    condition     = can(regex("^[A-Za-z0-9_]+$", var.dataset_id)) && length(var.dataset_id) <= 1024
    error_message = "dataset_id may contain only letters, digits and underscores."
  }
}

variable "firestore_database" {
  description = "Named Firestore (native mode) database of alpipe alone, holding the ingest ledger and the window state (FIRESTORE_DATABASE). Never (default): the web application may use that one, and alpipe's TTL policies and index exemptions must touch nothing of it."
  type        = string
  default     = "alpipe"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,61}[a-z0-9]$", var.firestore_database))
    error_message = "firestore_database must be a database ID of its own (4-63 lower-case letters, digits and hyphens, starting with a letter), not (default)."
  }
}

variable "firestore_collection_groups" {
  description = "Every collection group the Firestore adapters write in firestore_database. Each of their documents stores its payload in the string field json, which nothing queries: it is exempted from single-field indexing in each group (firestore.tf), as internal/docstore/firestore asks. Must be exactly ledger.CollectionGroups and stream.CollectionGroups (test/deploy checks both ways)."
  type        = list(string)
  default = [
    "aggregations", "control", "ledger", "ledger_locks", "ledger_md5", "ledger_objects",
    "orders", "outbox", "parked", "seen", "sessions", "state", "stream",
  ]

  validation {
    condition     = length(var.firestore_collection_groups) == length(distinct(var.firestore_collection_groups)) && alltrue([for c in var.firestore_collection_groups : can(regex("^[a-z_][a-z0-9_]*$", c))])
    error_message = "firestore_collection_groups must be distinct collection IDs (lower-case letters, digits, underscores)."
  }
}

variable "firestore_ttl_collection_groups" {
  description = "Collection groups whose documents carry an expire_at timestamp and are deleted by a Firestore TTL policy: the ledger's locks (ledger_locks; ledger records themselves are history and never expire), the orders dedup records (orders), the tick lease (control), and the dead-letter dedup records (seen). TTL only reclaims space, within about 24 h; the code never relies on it for correctness. Must be exactly ledger.TTLCollectionGroups and stream.TTLCollectionGroups."
  type        = list(string)
  default     = ["ledger_locks", "orders", "control", "seen"]

  validation {
    condition     = length(var.firestore_ttl_collection_groups) == length(distinct(var.firestore_ttl_collection_groups)) && alltrue([for c in var.firestore_ttl_collection_groups : can(regex("^[a-z_][a-z0-9_]*$", c))])
    error_message = "firestore_ttl_collection_groups must be distinct collection IDs (lower-case letters, digits, underscores)."
  }

  validation {
    condition     = alltrue([for c in var.firestore_ttl_collection_groups : contains(var.firestore_collection_groups, c)])
    error_message = "Every firestore_ttl_collection_groups entry must also be in firestore_collection_groups."
  }
}

# ---------------------------------------------------------------------------
# Ingest
# ---------------------------------------------------------------------------

variable "ledger_lease" {
  description = "How long an ingest attempt owns a file before another delivery may take it over (LEDGER_LEASE). Must exceed the 540 s request timeout, or a redelivery could take over a file that is still loading. Whole units only, e.g. 10m or 9m30s."
  type        = string
  default     = "10m"

  validation {
    condition     = can(regex("^([0-9]+h)?([0-9]+m)?([0-9]+s)?$", var.ledger_lease)) && sum([for m in regexall("([0-9]+)([hms])", var.ledger_lease) : tonumber(m[0]) * { h = 3600, m = 60, s = 1 }[m[1]]]) > 540
    error_message = "ledger_lease must be a duration such as 10m, longer than the 540s ingest timeout."
  }
}

# ---------------------------------------------------------------------------
# Orders stream
# ---------------------------------------------------------------------------

variable "orders_topic" {
  description = "Pub/Sub topic the web application publishes confirmed orders to, with attribute momento_evento."
  type        = string
  default     = "pedidos-nuevos"

  validation {
    condition     = can(regex("^[a-zA-Z][a-zA-Z0-9._~+%-]{2,254}$", var.orders_topic))
    error_message = "orders_topic must be a valid Pub/Sub topic ID."
  }
}

variable "dead_letter_topic" {
  description = "Topic that receives orders AggregateOrders failed to handle max_delivery_attempts times (transient failures only: invalid orders are acknowledged and recorded in pedidos_descartados)."
  type        = string
  default     = "pedidos-nuevos-dlq"

  validation {
    condition     = can(regex("^[a-zA-Z][a-zA-Z0-9._~+%-]{2,254}$", var.dead_letter_topic))
    error_message = "dead_letter_topic must be a valid Pub/Sub topic ID."
  }
}

variable "push_ack_deadline_seconds" {
  description = "Ack deadline of the push subscription, which is also the push request timeout; the AggregateOrders request timeout is set to the same value so that Cloud Run never answers after Pub/Sub has given up."
  type        = number
  default     = 60

  validation {
    condition     = var.push_ack_deadline_seconds >= 10 && var.push_ack_deadline_seconds <= 600 && floor(var.push_ack_deadline_seconds) == var.push_ack_deadline_seconds
    error_message = "push_ack_deadline_seconds must be a whole number between 10 and 600."
  }
}

variable "push_retry_backoff" {
  description = "Exponential backoff of push redeliveries, in seconds. The minimum spaces retries of a contended window; the maximum bounds how stale a retried order can get."
  type = object({
    minimum_seconds = number
    maximum_seconds = number
  })
  default = {
    minimum_seconds = 10
    maximum_seconds = 600
  }

  validation {
    condition     = var.push_retry_backoff.minimum_seconds >= 0 && var.push_retry_backoff.maximum_seconds <= 600 && var.push_retry_backoff.minimum_seconds <= var.push_retry_backoff.maximum_seconds
    error_message = "push_retry_backoff must satisfy 0 <= minimum_seconds <= maximum_seconds <= 600."
  }
}

variable "max_delivery_attempts" {
  description = "Deliveries of one order before it goes to the dead-letter topic. With the default backoff, 10 attempts span about half an hour, longer than a Firestore or BigQuery incident usually lasts."
  type        = number
  default     = 10

  validation {
    condition     = var.max_delivery_attempts >= 5 && var.max_delivery_attempts <= 100 && floor(var.max_delivery_attempts) == var.max_delivery_attempts
    error_message = "max_delivery_attempts must be a whole number between 5 and 100 (Pub/Sub limits)."
  }
}

variable "stream" {
  description = <<-EOT
    Settings of the stream processor per deployment, passed to AggregateOrders and AdvanceWatermark (which
    must agree) as TICK_LEASE, MAX_CLOCK_SKEW, BATCH_WAIT and BATCH_MAX_ORDERS. What each
    aggregation computes (window, key, measures, out-of-orderness, idle timeout, early delay, allowed
    lateness, late delay, accumulation) is not a variable: it is declared as data, one file per
    aggregation in internal/aggregation/declarations, which the services embed and from which this
    module creates each aggregation's panes table and view (bigquery.tf). Semantics in
    docs/event-time.md. Durations use whole h/m/s units (1h, 10m, 90s, 0s).
    tick_lease: how long one tick may hold the aggregations; a tick that dies releases them by expiry.
    max_clock_skew: an order whose event time is further than this ahead of processing time is
      invalid (dead-lettered with its reason and counted), so a wrong clock cannot open a window
      that every tick reads for ever.
    batch_wait: how long AggregateOrders holds a push request to combine it with concurrent ones
      (the batch commits in one transaction, where each order writes its dedup record); 0s turns
      batching off. Milliseconds allowed (10ms); at most 1s, it adds to every push's latency.
    batch_max_orders: a batch is committed as soon as it holds this many orders, so it usually fits
      one transaction (Firestore takes 500 writes; a batch that needs more is split).
  EOT
  type = object({
    tick_lease       = optional(string, "2m")
    max_clock_skew   = optional(string, "24h")
    batch_wait       = optional(string, "10ms")
    batch_max_orders = optional(number, 200)
  })
  default = {}

  validation {
    condition = alltrue([for d in [var.stream.tick_lease, var.stream.max_clock_skew] :
    can(regex("^(0s|([0-9]+h)?([0-9]+m)?([0-9]+s)?)$", d)) && d != ""])
    error_message = "stream.tick_lease and stream.max_clock_skew must be written in whole h/m/s units, e.g. 2m or 24h."
  }

  validation {
    # Less than the watermark's own tolerance would call ordinary late clocks invalid.
    condition     = try(sum([for m in regexall("([0-9]+)([hms])", var.stream.max_clock_skew) : tonumber(m[0]) * { h = 3600, m = 60, s = 1 }[m[1]]]) >= 60, false)
    error_message = "stream.max_clock_skew must be at least 1m."
  }

  validation {
    condition     = can(regex("^[0-9]+(ms|s)$", var.stream.batch_wait)) && try(endswith(var.stream.batch_wait, "ms") ? tonumber(trimsuffix(var.stream.batch_wait, "ms")) <= 1000 : tonumber(trimsuffix(var.stream.batch_wait, "s")) <= 1, false)
    error_message = "stream.batch_wait must be a duration in ms or s between 0s and 1s, e.g. 10ms (0s: no batching)."
  }

  validation {
    condition     = var.stream.batch_max_orders >= 1 && var.stream.batch_max_orders <= 250 && floor(var.stream.batch_max_orders) == var.stream.batch_max_orders
    error_message = "stream.batch_max_orders must be a whole number between 1 and 250: a batch usually commits in one transaction (each order writes its dedup record; Firestore takes at most 500 writes), and a larger batch only holds its pushes longer."
  }

  validation {
    # The tick lease must outlive a tick's 60 s request timeout, or an overlapping
    # tick could take over a tick that is still writing panes.
    condition     = try(sum([for m in regexall("([0-9]+)([hms])", var.stream.tick_lease) : tonumber(m[0]) * { h = 3600, m = 60, s = 1 }[m[1]]]) > 60, false)
    error_message = "stream.tick_lease must be longer than 60s, the AdvanceWatermark request timeout."
  }
}

variable "watermark_schedule" {
  description = "Cron schedule of the AdvanceWatermark tick. Every minute keeps the dashboard within about a minute of real time; a tick costs one short request."
  type        = string
  default     = "* * * * *"

  validation {
    condition     = length(split(" ", var.watermark_schedule)) == 5
    error_message = "watermark_schedule must be a five-field cron expression."
  }
}

# ---------------------------------------------------------------------------
# Sweeper
# ---------------------------------------------------------------------------

variable "sweep" {
  description = <<-EOT
    SweepLanding settings (SWEEP_WINDOW, SWEEP_GRACE, SWEEP_MAX_OBJECTS, SWEEP_CONCURRENCY). Eventarc keeps
    an undelivered event for 24 h and has no dead-letter topic; the sweeper lists the landing objects
    created within window, older than grace, that have no final ledger record (DONE, REJECTED,
    DUPLICATE, SKIPPED), and ingests them through the same path as IngestCSV.
    window: how far back a run looks; longer than the longest outage to recover from (72h spans a
      weekend). Older misses need a person (alpipe backfill).
    grace: objects younger than this are left to Eventarc and its retries.
    max_objects: objects ingested per run at most, so that a day of misses is caught up over a few
      runs instead of one request that times out.
    concurrency: objects ingested at once within a run.
  EOT
  type = object({
    window      = optional(string, "72h")
    grace       = optional(string, "30m")
    max_objects = optional(number, 100)
    concurrency = optional(number, 2)
  })
  default = {}

  validation {
    condition     = alltrue([for d in [var.sweep.window, var.sweep.grace] : can(regex("^([0-9]+h)?([0-9]+m)?([0-9]+s)?$", d)) && d != ""])
    error_message = "sweep.window and sweep.grace must be written in whole h/m/s units, e.g. 72h or 30m."
  }

  validation {
    # Grace must give Eventarc's first delivery and a full ingest (540 s) time to finish, and the
    # window must extend past Eventarc's 24 h of retries, or the sweeper would never see the files
    # it exists for.
    condition = try(
      sum([for m in regexall("([0-9]+)([hms])", var.sweep.grace) : tonumber(m[0]) * { h = 3600, m = 60, s = 1 }[m[1]]]) >= 600 &&
      sum([for m in regexall("([0-9]+)([hms])", var.sweep.window) : tonumber(m[0]) * { h = 3600, m = 60, s = 1 }[m[1]]]) > 86400,
      false
    )
    error_message = "sweep.grace must be at least 10m and sweep.window longer than 24h (Eventarc retries an event for 24 h)."
  }

  validation {
    condition     = var.sweep.max_objects >= 1 && var.sweep.max_objects <= 1000 && floor(var.sweep.max_objects) == var.sweep.max_objects
    error_message = "sweep.max_objects must be a whole number between 1 and 1000."
  }

  validation {
    # One vCPU and the memory of main.tf: each object in flight holds one stream's buffers.
    condition     = var.sweep.concurrency >= 1 && var.sweep.concurrency <= 4 && floor(var.sweep.concurrency) == var.sweep.concurrency
    error_message = "sweep.concurrency must be a whole number between 1 and 4."
  }
}

variable "sweep_schedule" {
  description = "Cron schedule of the SweepLanding run. Every 15 minutes: a missed file is loaded at most grace plus 15 minutes after its events gave up, and an idle run costs one bucket listing."
  type        = string
  default     = "*/15 * * * *"

  validation {
    condition     = length(split(" ", var.sweep_schedule)) == 5
    error_message = "sweep_schedule must be a five-field cron expression."
  }
}

# ---------------------------------------------------------------------------
# Capacity
# ---------------------------------------------------------------------------

variable "max_instances" {
  description = <<-EOT
    Upper bound of Cloud Run instances per function, a cost and quota guard.
    IngestCSV: a handful of files a day, each one CPU-bound on its own instance; more parallel files
    only spend BigQuery's 1,500 table modifications per table per day faster.
    AggregateOrders: since state layout 3 an order writes only its own dedup record, so no window
    or key is a write hot spot: throughput is bounded by instances times the orders each holds in
    its batch, and by Firestore's overall write rate, not by a per-key document.
    AdvanceWatermark: one tick at a time is the design (a lease guards it); one instance suffices.
    SweepLanding: one run at a time (concurrency 1, one instance); a run overlapping the next
    schedule is refused by Cloud Run and the next run continues.
  EOT
  type = object({
    IngestCSV        = optional(number, 5)
    AggregateOrders  = optional(number, 10)
    AdvanceWatermark = optional(number, 1)
    SweepLanding     = optional(number, 1)
  })
  default = {}

  validation {
    condition     = alltrue([for n in values(var.max_instances) : n >= 1 && n <= 100 && floor(n) == n])
    error_message = "Every max_instances value must be a whole number between 1 and 100."
  }
}

# ---------------------------------------------------------------------------
# Images and operations
# ---------------------------------------------------------------------------

variable "artifact_repository" {
  description = "Artifact Registry Docker repository for the server image."
  type        = string
  default     = "alpipe"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,61}[a-z0-9]$", var.artifact_repository))
    error_message = "artifact_repository must be lower-case letters, digits and hyphens."
  }
}

variable "reject_codes" {
  description = "Row reject codes (keys of the `rejects` map in the per-file log line: row-level codes such as column_count, and COLUMN:RULE codes from the feed contracts, such as pais:required) that get their own log-based metric, so rejected rows can be charted by feed and reason. A test derives the full list from internal/contract and internal/ingest; a code missing here would still count in rows_quarantined."
  type        = list(string)
  default = [
    "cantidad:below_min", "cantidad:invalid_int", "cantidad:out_of_range", "cantidad:required",
    "column_count",
    "fecha:invalid_date", "fecha:out_of_partition_range", "fecha:required",
    "file_rejected",
    "importe:out_of_range", "importe:required",
    "invalid_utf8", "invalid_windows1252",
    "linea:below_min", "linea:invalid_int", "linea:out_of_range", "linea:required",
    "malformed_record",
    "nul_byte",
    "opinion_id:required",
    "pais:not_iso3166", "pais:required",
    "pedido_id:required",
    "precio_unitario:below_min", "precio_unitario:invalid_numeric", "precio_unitario:out_of_range", "precio_unitario:required", "precio_unitario:too_precise",
    "puntuacion:above_max", "puntuacion:below_min", "puntuacion:invalid_int", "puntuacion:out_of_range", "puntuacion:required",
    "sku:required",
    "unterminated_quote",
  ]

  validation {
    condition     = alltrue([for c in var.reject_codes : can(regex("^[a-z][a-z0-9_]*(:[a-z][a-z0-9_]*)?$", c))])
    error_message = "reject_codes must be lower-case identifiers, optionally <column>:<rule> (they become metric names and JSON field paths)."
  }
}

variable "alert_notification_channels" {
  description = "Cloud Monitoring notification channel IDs (projects/P/notificationChannels/N) that receive every alert. Empty: incidents only show in the console, which prod refuses and dev allows with a warning at every plan."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for c in var.alert_notification_channels : can(regex("^projects/[^/]+/notificationChannels/[0-9]+$", c))])
    error_message = "alert_notification_channels must be full channel resource names."
  }

  validation {
    condition     = var.environment != "prod" || length(var.alert_notification_channels) > 0
    error_message = "A prod environment needs alert_notification_channels: alerts that notify nobody are a silent failure. List the on-call channels (gcloud beta monitoring channels list)."
  }
}

variable "rejection_rate_threshold" {
  description = "Alert when more than this fraction of the rows read in the last hour went to quarantine, per feed. The ERP's normal dirt is well under 1 %."
  type        = number
  default     = 0.05

  validation {
    condition     = var.rejection_rate_threshold > 0 && var.rejection_rate_threshold < 1
    error_message = "rejection_rate_threshold must be a fraction between 0 and 1."
  }
}

variable "ingest_error_threshold" {
  description = "Alert when alpipe-ingest answers more than this many requests with a non-2xx status in an hour. Each one is a failed attempt at a file that Eventarc retries (10 s to 10 min apart); a single transient failure that the retry fixes is not worth a page, a file failing three times in an hour is."
  type        = number
  default     = 2

  validation {
    condition     = var.ingest_error_threshold >= 0 && floor(var.ingest_error_threshold) == var.ingest_error_threshold
    error_message = "ingest_error_threshold must be a whole number, 0 or more."
  }
}

variable "watermark_lag_threshold_seconds" {
  description = "Alert when the watermark trails processing time by more than this. Healthy lag is out_of_orderness plus one tick (about 11 min with the defaults)."
  type        = number
  default     = 1800

  validation {
    condition     = var.watermark_lag_threshold_seconds >= 600
    error_message = "watermark_lag_threshold_seconds must be at least 600 (healthy lag already includes out_of_orderness)."
  }
}

variable "tick_interval" {
  description = "The watermark timer's cadence: \"1m\" (Cloud Scheduler alone) or \"30s\" (plus one follow-up tick per minute through Cloud Tasks). Declarations whose early_delay (other than 0s) or late_delay is shorter are refused by the service at start."
  type        = string
  default     = "1m"
  nullable    = false

  validation {
    condition     = contains(["1m", "30s"], var.tick_interval)
    error_message = "tick_interval must be \"1m\" or \"30s\"."
  }

  # The follow-up fills the half minute of every minute's Scheduler tick.
  validation {
    condition     = var.tick_interval == "1m" || var.watermark_schedule == "* * * * *"
    error_message = "tick_interval = \"30s\" needs watermark_schedule = \"* * * * *\": each follow-up fills the half minute of a Scheduler tick."
  }
}

variable "tick_queue" {
  description = "The Cloud Tasks queue of the follow-up ticks (tick_interval = \"30s\"): its name, and how many attempts a follow-up gets within how long."
  type = object({
    name               = optional(string, "alpipe-ticks")
    max_attempts       = optional(number, 2)
    max_retry_duration = optional(string, "20s")
  })
  default  = {}
  nullable = false

  validation {
    condition     = can(regex("^[A-Za-z0-9-]{1,100}$", var.tick_queue.name))
    error_message = "tick_queue.name: 1-100 letters, digits or '-'."
  }

  # A retry after the half minute would only duplicate the next Scheduler
  # tick (harmless, but pointless).
  validation {
    condition     = var.tick_queue.max_attempts >= 1 && var.tick_queue.max_attempts <= 5 && can(regex("^[0-9]+s$", var.tick_queue.max_retry_duration)) && try(tonumber(trimsuffix(var.tick_queue.max_retry_duration, "s")) <= 25, false)
    error_message = "tick_queue: max_attempts 1-5 and max_retry_duration at most 25s, so that no retry lands after the next Scheduler tick."
  }
}
