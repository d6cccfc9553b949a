// Package status is the morning report: did last night's files load, how
// many rows were rejected and why, is the real-time view keeping up, and
// what was discarded. It reads the ledger, the warehouse and the stream
// state through small interfaces, so that the same report is built in the
// CLI against the cloud (alpipe status --cloud), in the local server, and
// in tests. It serves its report with Handler but owns no route: the
// server that mounts it chooses where.
package status
