// Package objname holds Cloud Storage's naming rules for buckets and
// objects, plus the stricter rule of a folder tree (the local fake stores
// objects as files), so a refusal reads the same wherever it happens.
package objname

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxObjectBytes is Cloud Storage's limit on an object name's UTF-8 length.
const MaxObjectBytes = 1024

// Object checks Cloud Storage's rules for an object name: 1 to 1024 bytes of
// valid UTF-8, no control characters (they break delivery in headers and
// event subjects), not "." or "..", not under ".well-known/acme-challenge/".
func Object(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("object name is empty")
	case len(name) > MaxObjectBytes:
		return fmt.Errorf("object name is %d bytes, more than Cloud Storage's %d", len(name), MaxObjectBytes)
	case name == "." || name == "..":
		return fmt.Errorf("object name %q is not allowed by Cloud Storage", name)
	case strings.HasPrefix(name, ".well-known/acme-challenge/"):
		return fmt.Errorf("object name %q: names under .well-known/acme-challenge/ are not allowed by Cloud Storage", name)
	}
	return text("object name", name)
}

// Local checks Object's rules and what a folder tree can hold faithfully: no
// segment empty, "." or ".." (stored under another name, or outside its
// bucket), and no trailing "/" (a folder placeholder).
func Local(name string) error {
	if err := Object(name); err != nil {
		return err
	}
	if strings.HasSuffix(name, "/") {
		return fmt.Errorf("object name %q ends in /: folder placeholders cannot be stored by the local server", name)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("object name %q has an empty, . or .. segment, which the local server cannot store as a file", name)
		}
	}
	return nil
}

// Prefix checks a listing prefix (or offset): any text an object name may
// start with, including "" and a trailing "/".
func Prefix(p string) error {
	if len(p) > MaxObjectBytes {
		return fmt.Errorf("prefix is %d bytes, more than Cloud Storage's %d", len(p), MaxObjectBytes)
	}
	return text("prefix", p)
}

// text refuses invalid UTF-8 and control characters, naming the first.
func text(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not valid UTF-8", what, s)
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q has the control character %U at byte %d; Cloud Storage names cannot contain CR, LF or other control characters", what, s, r, i)
		}
	}
	return nil
}

// Bucket checks Cloud Storage's bucket naming rules.
func Bucket(b string) error {
	limit := 63
	if strings.Contains(b, ".") {
		limit = 222
	}
	if len(b) < 3 || len(b) > limit {
		return fmt.Errorf("bucket name %q must have 3 to 63 characters (222 with dots)", b)
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("bucket name %q: only lowercase letters, digits, -, _ and . are allowed", b)
		}
	}
	if !alnum(b[0]) || !alnum(b[len(b)-1]) {
		return fmt.Errorf("bucket name %q must start and end with a letter or digit", b)
	}
	for part := range strings.SplitSeq(b, ".") {
		if part == "" || len(part) > 63 {
			return fmt.Errorf("bucket name %q: each dot-separated part must have 1 to 63 characters", b)
		}
	}
	if _, err := netip.ParseAddr(b); err == nil {
		return fmt.Errorf("bucket name %q is an IP address", b)
	}
	if strings.HasPrefix(b, "goog") || strings.Contains(b, "google") {
		return fmt.Errorf("bucket name %q: names starting with goog or containing google are reserved", b)
	}
	return nil
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
