// Package firestorerules holds Firestore's refusals that every docstore
// adapter must apply identically, so that the embedded store refuses exactly
// what Firestore refuses (limits checked against the gcloud emulator).
package firestorerules

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
)

const (
	// MaxIDBytes is Firestore's limit on a collection or document ID.
	MaxIDBytes = 1500
	// maxNameBytes is Firestore's limit on a document name's size (6 KiB),
	// computed as in nameSize.
	maxNameBytes = 6 * 1024
)

// Path is a validated document path split at its last segment.
type Path struct {
	Full       string
	Collection string
	ID         string
	nameBytes  int
}

// DocPath validates p as a document path.
func DocPath(p string) (Path, error) {
	segs, err := segments(p)
	if err != nil {
		return Path{}, err
	}
	if len(segs)%2 != 0 {
		return Path{}, badPath(p, "names a collection, not a document")
	}
	n := nameSize(segs)
	if n > maxNameBytes {
		return Path{}, badPath(p, "longer than Firestore's 6 KiB document name limit")
	}
	i := strings.LastIndexByte(p, '/')
	return Path{Full: p, Collection: p[:i], ID: p[i+1:], nameBytes: n}, nil
}

// CollectionPath validates p as a collection path.
func CollectionPath(p string) error {
	segs, err := segments(p)
	if err != nil {
		return err
	}
	if len(segs)%2 != 1 {
		return badPath(p, "names a document, not a collection")
	}
	return nil
}

func segments(p string) ([]string, error) {
	if p == "" {
		return nil, badPath(p, "empty")
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if err := checkID(s); err != nil {
			return nil, badPath(p, err.Error())
		}
	}
	return segs, nil
}

func checkID(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty segment")
	case s == "." || s == "..":
		return fmt.Errorf("segment %q is reserved", s)
	case len(s) > MaxIDBytes:
		return fmt.Errorf("segment of %d bytes exceeds %d", len(s), MaxIDBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("segment is not valid UTF-8")
	case len(s) >= 4 && strings.HasPrefix(s, "__") && strings.HasSuffix(s, "__"):
		// Firestore reserves IDs matching __.*__.
		return fmt.Errorf("segment %q is reserved (__.*__)", s)
	}
	return nil
}

// nameSize is Firestore's storage size of a document name: each segment's
// bytes plus one, plus 16.
func nameSize(segs []string) int {
	n := 16
	for _, s := range segs {
		n += len(s) + 1
	}
	return n
}

func badPath(p, why string) error {
	return fmt.Errorf("%w %q: %s", docstore.ErrBadPath, shortPath(p), why)
}

// shortPath keeps error messages readable for paths up to 6 KiB long.
func shortPath(p string) string {
	const show = 80
	if len(p) > show {
		return p[:show] + "..."
	}
	return p
}
