# Firestore (native mode) holds the ingest ledger and the window state, in a
# named database of alpipe's own (var.firestore_database): the project's
# (default) database may belong to the web application, and the TTL policies
# and index exemptions below must touch nothing of it.
resource "google_firestore_database" "state" {
  name        = var.firestore_database
  location_id = var.region
  type        = "FIRESTORE_NATIVE"

  # The adapters are written for pessimistic transactions (reads lock), the
  # behaviour the emulator tests exercise; say so rather than inherit it.
  concurrency_mode            = "PESSIMISTIC"
  app_engine_integration_mode = "DISABLED"

  # Seven days of point-in-time recovery: the ledger is what makes ingestion
  # exactly-once, worth the small storage cost to be able to restore.
  point_in_time_recovery_enablement = "POINT_IN_TIME_RECOVERY_ENABLED"
  # The ledger (which file generation was loaded, rejected or skipped) makes
  # ingestion exactly-once, and the window state holds the counts of open
  # windows. In prod a plan that would delete or re-create the database (a
  # renamed firestore_database, another location) fails (environment.tf),
  # the API refuses to delete it, and a destroy that got past both would
  # only forget it. A dev environment's destroy deletes it.
  delete_protection_state = local.production ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  deletion_policy         = local.production ? "ABANDON" : "DELETE"
}

# TTL policies on expire_at: dedup records and expired window state, and
# ledger entries, are deleted by Firestore within about 24 h of expiring. The
# code never relies on it (expired documents stay readable until then); TTL
# only keeps storage proportional to open windows instead of history.
#
# The single-field indexes of expire_at are disabled (empty index_config): a
# monotonically increasing indexed timestamp written by every order would be
# a write hot spot, and no query filters on it.
#
# No composite index is declared: the adapters read documents by path and
# list collections by document ID, which Firestore serves without one. The
# one query on a field is the stream's ListTag: an equality query on the
# string field tag (ordered by document ID) over stream/dedup/orders, the
# collection group "orders", which finds the dedup records of one
# generation for the tick to fold. Its automatic single-field index serves
# it, so tag must never be exempted from indexing (no google_firestore_field
# for it, in "orders" or any group): without the index the query fails with
# FAILED_PRECONDITION and no tick can fold an order.
resource "google_firestore_field" "ttl" {
  for_each = toset(var.firestore_ttl_collection_groups)

  database   = google_firestore_database.state.name
  collection = each.key
  field      = "expire_at"

  ttl_config {}

  index_config {}
}

# Every document the adapters write keeps its payload in the string field
# json (internal/docstore/firestore). Nothing queries it, and indexing a
# string of up to a few hundred KiB would cost write latency and storage on
# every order: its single-field indexes are disabled in every collection
# group (empty index_config). expire_at is exempted by the TTL resource above.
resource "google_firestore_field" "payload" {
  for_each = toset(var.firestore_collection_groups)

  database   = google_firestore_database.state.name
  collection = each.key
  field      = "json"

  index_config {}
}
