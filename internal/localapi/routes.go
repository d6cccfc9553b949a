package localapi

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// LedgerURL is the path and query of GET LedgerPath for the record of one
// generation.
func LedgerURL(k ledger.Key) string {
	q := url.Values{"bucket": {k.Bucket}, "object": {k.Object}, "generation": {strconv.FormatInt(k.Generation, 10)}}
	return LedgerPath + "?" + q.Encode()
}

// LedgerKey reads the generation a GET LedgerPath names; ok is false when it
// names none (the whole ledger is asked for).
func LedgerKey(q url.Values) (k ledger.Key, ok bool, err error) {
	if q.Get("object") == "" {
		return ledger.Key{}, false, nil
	}
	gen, err := strconv.ParseInt(q.Get("generation"), 10, 64)
	if err != nil {
		return ledger.Key{}, true, fmt.Errorf("generation: %w", err)
	}
	return ledger.Key{Bucket: q.Get("bucket"), Object: q.Get("object"), Generation: gen}, true, nil
}

// ClockURL is the path and query of POST ClockPath that sets the clock to t.
func ClockURL(t time.Time) string {
	return ClockPath + "?now=" + url.QueryEscape(t.UTC().Format(time.RFC3339Nano))
}

// ClockTime reads the time a POST ClockPath sets.
func ClockTime(q url.Values) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, q.Get("now"))
	if err != nil {
		return time.Time{}, fmt.Errorf("now: %w", err)
	}
	return t, nil
}

// ClockAnswer is the answer to POST ClockPath: the time the clock shows.
type ClockAnswer struct {
	Now time.Time `json:"now"`
}

// StatusURL is the path and query of GET StatusPath: since and files 0
// mean the server's defaults.
func StatusURL(since time.Duration, files int) string {
	q := url.Values{}
	if since > 0 {
		q.Set("since", since.String())
	}
	if files > 0 {
		q.Set("files", strconv.Itoa(files))
	}
	return StatusPath + "?" + q.Encode()
}
