package firestorerules

import (
	"fmt"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// The Firestore adapter stores Doc.Tag in a string field "tag" that keeps
// its automatic single-field index, so the limits on indexed values apply.
const (
	// MaxTagBytes is Firestore's limit on an indexed string value: longer
	// ones are indexed truncated, which would make equality unreliable.
	MaxTagBytes = 1500
	// maxIndexEntryBytes is Firestore's limit on one index entry: the
	// document name, the indexed field (name bytes+1, value bytes+1) and 32.
	// A write whose entry exceeds it is refused.
	maxIndexEntryBytes = 7680
	tagFieldNameBytes  = len("tag") + 1
	indexEntryOverhead = 32
)

// CheckTag validates tag as a Doc.Tag (empty: none) or, with need, as the
// tag argument of ListTag.
func CheckTag(tag string, need bool) error {
	switch {
	case tag == "" && need:
		return fmt.Errorf("%w: empty", docstore.ErrBadTag)
	case len(tag) > MaxTagBytes:
		return fmt.Errorf("%w: %d bytes exceed Firestore's %d-byte limit on an indexed string", docstore.ErrBadTag, len(tag), MaxTagBytes)
	case !utf8.ValidString(tag):
		return fmt.Errorf("%w: not valid UTF-8", docstore.ErrBadTag)
	}
	return nil
}

// tagBytes is what a non-empty tag adds to the document's size.
func tagBytes(tag string) int { return tagFieldNameBytes + len(tag) + 1 }

// checkTagOf validates the tag of a document at p.
func checkTagOf(p Path, tag string) error {
	if err := CheckTag(tag, false); err != nil {
		return fmt.Errorf("%w (document %s)", err, shortPath(p.Full))
	}
	if tag == "" {
		return nil
	}
	if n := p.nameBytes + tagBytes(tag) + indexEntryOverhead; n > maxIndexEntryBytes {
		return fmt.Errorf("%w: index entry of %d bytes (document name and tag) exceeds Firestore's 7.5 KiB (document %s)", docstore.ErrBadTag, n, shortPath(p.Full))
	}
	return nil
}
