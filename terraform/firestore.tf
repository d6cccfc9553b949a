# Firestore (native mode) holds the ingest ledger and the window state.
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
  delete_protection_state           = var.deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
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
# list collections by document ID, which Firestore serves without one.
resource "google_firestore_field" "ttl" {
  for_each = toset(var.firestore_ttl_collection_groups)

  database   = google_firestore_database.state.name
  collection = each.key
  field      = "expire_at"

  ttl_config {}

  index_config {}
}
