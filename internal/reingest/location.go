package reingest

import (
	"fmt"
	"strings"
)

// ParseGS splits "gs://bucket/path" into bucket and path. ok is false when
// s does not start with gs:// (a name in the local server's bucket).
func ParseGS(s string) (bucket, path string, ok bool, err error) {
	rest, found := strings.CutPrefix(s, "gs://")
	if !found {
		return "", s, false, nil
	}
	bucket, path, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", true, fmt.Errorf("%q names no bucket: want gs://BUCKET/PATH", s)
	}
	return bucket, path, true, nil
}
