// Package ops is what a person runs on day two: backfilling a prefix of
// landed files, re-queueing a fixed quarantine file, and the morning status
// report. It drives the same ingest path a file drop takes (the ingest
// service in this process, or the IngestCSV function of a running local
// server) and reads the ledger, the warehouse and the stream state through
// small interfaces, so that each piece runs against the cloud, against the
// local server (package remote) and in tests alike.
package ops
