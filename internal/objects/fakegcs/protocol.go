package fakegcs

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	raw "google.golang.org/api/storage/v1"
)

// conditions are the generation preconditions of an upload.
type conditions struct {
	match, notMatch *int64
}

func parseConditions(q url.Values) (conditions, error) {
	var c conditions
	for _, p := range []struct {
		key string
		dst **int64
	}{{"ifGenerationMatch", &c.match}, {"ifGenerationNotMatch", &c.notMatch}} {
		if v := q.Get(p.key); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return c, fmt.Errorf("invalid %s %q", p.key, v)
			}
			*p.dst = &n
		}
	}
	for _, k := range []string{"ifMetagenerationMatch", "ifMetagenerationNotMatch"} {
		if q.Has(k) {
			return c, fmt.Errorf("%s is not supported by the local fake", k)
		}
	}
	return c, nil
}

func (c conditions) met(live int64) bool {
	if c.match != nil && *c.match != live {
		return false
	}
	if c.notMatch != nil && *c.notMatch == live {
		return false
	}
	return true
}

type contentRange struct {
	present    bool
	hasRange   bool
	start, end int64
	totalKnown bool
	total      int64
}

// parseContentRange reads "bytes A-B/T", "bytes A-B/*", "bytes */T" and
// "bytes */*" (a status query).
func parseContentRange(h string) (contentRange, error) {
	if h == "" {
		return contentRange{}, nil
	}
	bad := fmt.Errorf("invalid Content-Range %q", h)
	spec, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return contentRange{}, bad
	}
	rng, total, ok := strings.Cut(spec, "/")
	if !ok {
		return contentRange{}, bad
	}
	cr := contentRange{present: true}
	if rng != "*" {
		a, b, ok := strings.Cut(rng, "-")
		if !ok {
			return cr, bad
		}
		var err1, err2 error
		cr.start, err1 = strconv.ParseInt(a, 10, 64)
		cr.end, err2 = strconv.ParseInt(b, 10, 64)
		if err1 != nil || err2 != nil || cr.start < 0 || cr.end < cr.start {
			return cr, bad
		}
		cr.hasRange = true
	}
	if total != "*" {
		n, err := strconv.ParseInt(total, 10, 64)
		if err != nil || n < 0 {
			return cr, bad
		}
		cr.total, cr.totalKnown = n, true
	}
	return cr, nil
}

// parseHashHeader reads "crc32c=<b64>,md5=<b64>" (X-Goog-Hash).
func parseHashHeader(h string) (md5sum, crc string) {
	for item := range strings.SplitSeq(h, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
		switch k {
		case "md5":
			md5sum = v
		case "crc32c":
			crc = v
		}
	}
	return md5sum, crc
}

func decodeMeta(r io.Reader) (*raw.Object, error) {
	meta := &raw.Object{}
	err := json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(meta)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("invalid object metadata: %w", err)
	}
	return meta, nil
}

func metaHeaders(h http.Header) map[string]string {
	var m map[string]string
	for k := range h {
		if name, ok := strings.CutPrefix(strings.ToLower(k), "x-goog-meta-"); ok {
			if m == nil {
				m = map[string]string{}
			}
			m[name] = h.Get(k)
		}
	}
	return m
}

func encodeCRC(c uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], c)
	return base64.StdEncoding.EncodeToString(b[:])
}

// baseURL is the address the client used, so that a session URL works both
// on Server's own listener and on a server that mounts Handler.
func baseURL(r *http.Request) string {
	scheme := "http"
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
		scheme = p
	} else if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// apiError answers in the JSON API's error shape, which the client library
// turns into a *googleapi.Error with the status code.
func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	reason := map[int]string{400: "invalid", 404: "notFound", 409: "conflict", 412: "conditionNotMet", 413: "uploadTooLarge", 429: "rateLimitExceeded"}[status]
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": status, "message": msg,
		"errors": []map[string]string{{"domain": "global", "reason": firstNonEmpty(reason, "backendError"), "message": msg}},
	}})
}
