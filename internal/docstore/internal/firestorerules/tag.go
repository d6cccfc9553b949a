package firestorerules

import (
	"fmt"
	"unicode/utf8"

	"github.com/alpinashop/alpipe/internal/docstore"
)

// The Firestore adapter stores Doc.Tag in a string field "tag" that keeps
// its automatic single-field index, so the limits on indexed values apply.
//
// An index entry (at most 7.5 KiB) holds the document name (at most 6 KiB,
// path.go), the field (name bytes+1, value bytes+1) and 32 bytes: the
// longest name with the longest tag is exactly 7,680 bytes, so a valid
// path and tag never exceed it and it needs no check of its own.
const (
	// MaxTagBytes is Firestore's limit on an indexed string: 1,500 bytes
	// counting a string as its UTF-8 bytes plus one. A longer value is
	// indexed truncated and refused as a query value ("too large to be
	// used in a query", checked against the emulator), so a document with
	// it could never be listed.
	MaxTagBytes      = 1499
	tagFieldOverhead = len("tag") + 1 + 1
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
func tagBytes(tag string) int { return tagFieldOverhead + len(tag) }
