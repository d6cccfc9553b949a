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

// loadJobID names attempt n (from 1) of a Load: "<prefix>-<ID>-a<n>". The
// ID identifies the source, so every instance handling the same source
// derives the same name, and BigQuery's uniqueness of job IDs does the
// exactly-once work; the attempt suffix exists because a failed job's ID can
// never be used again.
func loadJobID(prefix, loadID string, attempt int) string {
	return prefix + "-" + loadID + "-a" + strconv.Itoa(attempt)
}

// stagingName is the object a load attempt reads:
// "<prefix><ID>/a<n>-<token>.ndjson", token being the call's writer token.
// The token keeps concurrent calls for one ID (a redelivered event racing
// the first delivery) from overwriting each other's file while a load job
// may be reading it; the job that wins the ID reads its own caller's file,
// and the loser deletes its unread copy at once.
func stagingName(prefix, loadID string, attempt int, token string) string {
	return prefix + loadID + "/a" + strconv.Itoa(attempt) + "-" + token + ".ndjson"
}

// refreshJobID names the query job that rebuilds one date of an aggregate:
// "<prefix>-refresh-<table>-<YYYYMMDD>-<random>".
//
// Unlike a load, a refresh must not have a deterministic ID. Its job is not
// "add this file once" but "make this partition match the source now": the
// same date is refreshed again after every later file of that day, after a
// reprocessing or a correction, and each of those must run a new query. A
// reused ID would answer 409, the caller would wait for the old job and the
// partition would keep the old figures. Running a refresh twice is harmless
// (WRITE_TRUNCATE of one partition from the source is idempotent), so the
// random suffix costs at worst one extra query on a retry. The table and
// date stay in the ID so that the job history reads as what happened.
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

// randomToken is 16 lower-case hex digits: valid in a job ID and as a label
// value (labels allow only lower-case letters, digits, '_' and '-').
func randomToken() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
