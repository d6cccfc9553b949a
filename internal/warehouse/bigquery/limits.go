package bigquery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// BigQuery's limits that the adapter checks before a request is sent, so
// that breaking one is a clear error (or a safe fallback) here rather than
// a 400 or a failed job later. Sources: https://cloud.google.com/bigquery/quotas
// (streaming inserts: "insertId field length: 128 characters") and the
// labels and partitioning documentation.
const (
	// maxInsertIDLen is the longest insertId tabledata.insertAll accepts.
	maxInsertIDLen = 128
	// maxLabelLen bounds label keys and values.
	maxLabelLen = 63
)

// hashedInsertIDPrefix starts an insertId derived from a long row ID.
const hashedInsertIDPrefix = "sha256-"

// insertID is the insertId sent for a row ID: the ID itself when BigQuery
// accepts its length, else "sha256-" and the hex SHA-256 of the ID (71
// characters). The hash is deterministic, so a retried row gets the same
// insertId and deduplication still works; a pane identity grows with the
// aggregation and key names, which must not turn into a rejected row.
func insertID(rowID string) string {
	if len(rowID) <= maxInsertIDLen {
		return rowID
	}
	sum := sha256.Sum256([]byte(rowID))
	return hashedInsertIDPrefix + hex.EncodeToString(sum[:])
}

// checkLabels applies BigQuery's label rule (ASCII subset): keys and values
// of at most 63 characters, lower-case letters, digits, '_' and '-'; keys
// start with a letter.
func checkLabels(labels map[string]string) error {
	for k, v := range labels {
		if k == "" || len(k) > maxLabelLen || k[0] < 'a' || k[0] > 'z' || !labelText(k) {
			return fmt.Errorf("label key %q: want 1 to %d lower-case letters, digits, '_' or '-', starting with a letter", k, maxLabelLen)
		}
		if len(v) > maxLabelLen || !labelText(v) {
			return fmt.Errorf("label %s value %q: want at most %d lower-case letters, digits, '_' or '-'", k, v, maxLabelLen)
		}
	}
	return nil
}

func labelText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkPartitionDay refuses a date BigQuery's DAY partitioning cannot
// address: its rows sit in the __UNPARTITIONED__ partition, and a refresh
// job naming table$YYYYMMDD would fail.
func checkPartitionDay(day int32) error {
	// The constants are dates (TestRefreshDailyErrors refreshes both).
	first, _ := time.Parse(time.DateOnly, warehouse.FirstPartitionDate)
	last, _ := time.Parse(time.DateOnly, warehouse.LastPartitionDate)
	if t := warehouse.DayTime(day); t.Before(first) || t.After(last) {
		return fmt.Errorf("date %s is outside BigQuery's DAY partition range %s..%s", t.Format(time.DateOnly), warehouse.FirstPartitionDate, warehouse.LastPartitionDate)
	}
	return nil
}
