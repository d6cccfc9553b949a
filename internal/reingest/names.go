package reingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/ingest"
	"github.com/alpinashop/alpipe/internal/objects/objname"
)

// A re-queued name must fit wherever it is stored, as a quarantine name
// must (ingest's quarantineName): Cloud Storage takes 1,024 bytes, and the
// local fake stores each "/" segment as a file name of at most objname.MaxSegmentBytes,
// beside a "<segment>.metadata" file.
const (
	maxNameBytes    = objname.MaxObjectBytes
	maxSegmentBytes = objname.MaxSegmentBytes
)

var (
	quarantineSuffix = regexp.MustCompile(`^(.+)\.g[0-9]+\.csv$`)
	// shortened is how ingest's quarantineName ends an object part it had
	// to cut: "~" and 16 hex digits of a hash of the whole landing name.
	shortened = regexp.MustCompile(`~[0-9a-f]{16}$`)
)

// SourceOf reads back the feed and source object from a quarantine object
// name, <prefix><feed>/<object without .csv>.g<generation>.csv. A name
// that ingest shortened to fit (…~<hash>.g<generation>.csv) has lost part
// of the source name, so it is refused rather than read back as the name of
// a file that never existed; only the object's metadata says the source.
func SourceOf(feeds *contract.Registry, quarantine string) (*contract.Feed, string, error) {
	for _, f := range feeds.Feeds() {
		seg := f.Name() + "/"
		for i := 0; ; {
			j := strings.Index(quarantine[i:], seg)
			if j < 0 {
				break
			}
			at := i + j
			i = at + 1
			if at > 0 && quarantine[at-1] != '/' {
				continue
			}
			m := quarantineSuffix.FindStringSubmatch(quarantine[at+len(seg):])
			if m == nil {
				continue
			}
			if shortened.MatchString(m[1]) {
				return nil, "", fmt.Errorf("the source name cannot be read back from a shortened name (…~<hash>.g<generation>.csv: ingest cut a name too long to store); the object's metadata %s=gs://BUCKET/OBJECT is needed", ingest.MetaSourceObject)
			}
			src := m[1] + ".csv"
			if g, ok := feeds.Match(src); ok && g.Name() == f.Name() {
				return f, src, nil
			}
		}
	}
	return nil, "", fmt.Errorf("the name is not <prefix><feed>/<object>.g<generation>.csv of a feed's object, so it does not say which file it quarantines")
}

var requeueSuffix = regexp.MustCompile(`\.requeue-[0-9]{8}T[0-9]{6}Z$`)

// RequeueName names a re-queued file next to its source:
// dir/name.csv becomes dir/name.requeue-20260315T083000Z.csv, and a
// re-queue of a re-queued file replaces the earlier time rather than
// stacking them. The new object is plain CSV, so a .gz source's name loses
// its .gz. When that does not fit, the name part is cut to fit and gets
// "~" and 16 hex digits of the SHA-256 of the source name (without a
// re-queue time) before ".requeue-": long names that share a beginning keep
// names of their own, and a re-queue of that file keeps its name. Only the
// file name is cut, as the feed's pattern constrains the folders.
func RequeueName(source string, now time.Time) string {
	dir, file := path.Split(source)
	stem := strings.TrimSuffix(file, ".gz")
	ext := path.Ext(stem)
	stem = strings.TrimSuffix(stem, ext)
	base := requeueSuffix.ReplaceAllString(stem, "")
	original := dir + base + file[len(stem):]
	if ext == "" {
		ext = ".csv"
	}
	tail := ".requeue-" + now.UTC().Format("20060102T150405Z") + ext
	if name := dir + base + tail; objname.Fits(name) {
		return name
	}
	sum := sha256.Sum256([]byte(original))
	tail = "~" + hex.EncodeToString(sum[:8]) + tail
	return dir + objname.Cut(base, min(maxSegmentBytes, maxNameBytes-len(dir))-len(tail)) + tail
}

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
