// Package reingest sends landed files through the file-drop path again:
// backfilling a prefix, re-queueing a fixed quarantine file, and (through
// package sweep) the landing sweeper's catch-up of files whose event never
// came. It drives the same ingest path a file drop takes (the ingest
// service in this process, Direct, or the IngestCSV function of a running
// local server) and reads the ledger through a small interface, so that
// each piece runs against the cloud, against the local server and in
// tests alike.
package reingest
