package objname

import (
	"strings"
	"unicode/utf8"
)

// MaxSegmentBytes bounds each "/" segment of a name this project derives
// (quarantine and re-queue names): the local fake stores a segment as a file
// name of at most 255 bytes, written through a temporary "." + name + up to
// 19 digits, beside a "<segment>.metadata" file.
const MaxSegmentBytes = 255 - len(".") - 19 - len(".metadata")

// Fits reports whether a derived name fits Cloud Storage (MaxObjectBytes)
// and the local fake (MaxSegmentBytes per segment).
func Fits(name string) bool {
	if len(name) > MaxObjectBytes {
		return false
	}
	for seg := range strings.SplitSeq(name, "/") {
		if len(seg) > MaxSegmentBytes {
			return false
		}
	}
	return true
}

// Cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func Cut(s string, n int) string {
	if n = max(n, 0); len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
