package bigquery

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/alpinashop/alpipe/internal/warehouse"
)

// maxJobIDLen is BigQuery's limit on a job ID.
const maxJobIDLen = 1024

// loadJobID names attempt n (from 1) of a Load: "<prefix>-<ID>-a<n>". Every
// instance derives the same name for a source, and BigQuery's uniqueness of
// job IDs does the exactly-once work; a failed job's ID is spent, hence the
// attempt.
func loadJobID(prefix, loadID string, attempt int) string {
	return prefix + "-" + loadID + "-a" + strconv.Itoa(attempt)
}

// stagingName is the object a load attempt reads:
// "<prefix><ID>/a<n>-<token>.ndjson". The call's token keeps concurrent
// calls for one ID from overwriting the file a load job may be reading.
func stagingName(prefix, loadID string, attempt int, token string) string {
	return prefix + loadID + "/a" + strconv.Itoa(attempt) + "-" + token + ".ndjson"
}

// refreshJobID names the query job that rebuilds one date of an aggregate:
// "<prefix>-refresh-<table>-<YYYYMMDD>-<random>". Random, unlike a load's:
// a date is refreshed again after every later file of the day, and a
// reused ID would answer 409 and leave the old figures. A refresh run
// twice is harmless (WRITE_TRUNCATE of a partition is idempotent).
func refreshJobID(prefix, table string, day int32) (string, error) {
	token, err := randomToken()
	if err != nil {
		return "", err
	}
	return prefix + "-refresh-" + table + "-" + partitionID(day) + "-" + token, nil
}

// partitionID is the decorator of a DAY-partitioned table: YYYYMMDD.
func partitionID(day int32) string {
	return warehouse.DayTime(day).Format("20060102")
}

// randomToken is 16 lower-case hex digits, valid in a job ID and a label.
func randomToken() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
