package bigquery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// maxInsertIDLen is the longest insertId insertAll accepts
// (https://cloud.google.com/bigquery/quotas#streaming_inserts).
const maxInsertIDLen = 128

// insertID is the insertId of a row ID: the ID itself, or past
// maxInsertIDLen "sha256-" and its hex SHA-256, the same on every retry, so
// that a pane identity grown with long aggregation and key names still
// deduplicates instead of being rejected.
func insertID(rowID string) string {
	if len(rowID) <= maxInsertIDLen {
		return rowID
	}
	sum := sha256.Sum256([]byte(rowID))
	return "sha256-" + hex.EncodeToString(sum[:])
}

// checkPartitionDay refuses a date BigQuery's DAY partitioning cannot
// address: a job naming its table$YYYYMMDD would fail.
func checkPartitionDay(day int32) error {
	first, _ := time.Parse(time.DateOnly, warehouse.FirstPartitionDate)
	last, _ := time.Parse(time.DateOnly, warehouse.LastPartitionDate)
	if t := warehouse.DayTime(day); t.Before(first) || t.After(last) {
		return fmt.Errorf("date %s is outside BigQuery's DAY partition range %s..%s", t.Format(time.DateOnly), warehouse.FirstPartitionDate, warehouse.LastPartitionDate)
	}
	return nil
}
