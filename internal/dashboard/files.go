package dashboard

import (
	"net/url"
	"time"

	"github.com/alpinashop/alpipe/internal/ledger"
)

// File is one ledger record as the page lists it.
type File struct {
	Object        string           `json:"object"` // gs://bucket/object#generation
	Bucket        string           `json:"bucket"`
	Name          string           `json:"name"`
	Generation    int64            `json:"generation"`
	State         ledger.State     `json:"state"`
	Feed          string           `json:"feed,omitempty"`
	Read          int64            `json:"read"`
	Loaded        int64            `json:"loaded"`
	Quarantined   int64            `json:"quarantined"`
	Rejects       map[string]int64 `json:"rejects,omitempty"`
	Reason        string           `json:"reason,omitempty"`
	StartedAt     time.Time        `json:"started_at,omitzero"`
	FinishedAt    time.Time        `json:"finished_at,omitzero"`
	Quarantine    string           `json:"quarantine,omitempty"`
	QuarantineURL string           `json:"quarantine_url,omitempty"`
}

func lastFiles(recs []ledger.Record, src Source) []File {
	recs = recs[:min(src.Files, len(recs))]
	out := make([]File, len(recs))
	for i, r := range recs {
		out[i] = File{
			Object: r.Key.String(), Bucket: r.Key.Bucket, Name: r.Key.Object, Generation: r.Key.Generation,
			State: r.State, Feed: r.Feed, Reason: r.Reason, Quarantine: r.Quarantine,
			Read: r.Counts.Read, Loaded: r.Counts.Loaded, Quarantined: r.Counts.Quarantined, Rejects: r.Counts.Rejects,
			StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		}
		if r.Quarantine != "" && src.QuarantineBucket != "" {
			out[i].QuarantineURL = downloadURL(src.DownloadBase, src.QuarantineBucket, r.Quarantine)
		}
	}
	return out
}

// lastLoaded is the newest DONE record by finish time (List orders by
// start, and a long load can finish after a later short one).
func lastLoaded(recs []ledger.Record) *LoadedFile {
	var best *ledger.Record
	for i, r := range recs {
		if r.State == ledger.Done && !r.FinishedAt.IsZero() && (best == nil || r.FinishedAt.After(best.FinishedAt)) {
			best = &recs[i]
		}
	}
	if best == nil {
		return nil
	}
	return &LoadedFile{Bucket: best.Key.Bucket, Name: best.Key.Object, Generation: best.Key.Generation, FinishedAt: best.FinishedAt.UTC()}
}

func downloadURL(base, bucket, object string) string {
	return base + "download/storage/v1/b/" + url.PathEscape(bucket) + "/o/" + url.PathEscape(object) + "?alt=media"
}
