package contract

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// FileError rejects a whole file: its header does not fit the contract, so
// none of its rows can be read with confidence.
type FileError struct {
	Reason string // e.g. "missing required column cantidad"
}

func (e *FileError) Error() string { return e.Reason }

// Binding is a feed bound to one file's header. It holds per-file scratch
// buffers, so it must not be shared between goroutines.
type Binding struct {
	feed    *Feed
	columns int      // fields a row must have
	pos     []int    // per declared column, its field index, or -1 when absent
	names   []string // the file's column names, for details

	text  []byte   // transcoded fields (Windows-1252 feeds)
	ends  []int    // end of each field in text
	vals  [][]byte // fields as UTF-8
	arena []byte   // string values of the current row
	spans []span   // where each STRING column's value lies in arena
}

// span locates a string value in the row arena; start < 0 means the value is
// already in out (NULL or an interned string).
type span struct{ start, end int }

// Bind maps a header row to the declared columns: by name, in any order,
// case-insensitively, surrounding spaces ignored. Columns the contract does
// not declare are allowed and ignored. A missing required column, a
// declared column given twice, or a header that is not text in the feed's
// encoding rejects the file with a *FileError.
func (f *Feed) Bind(header [][]byte) (*Binding, error) {
	b := &Binding{
		feed:    f,
		columns: len(header),
		pos:     make([]int, len(f.columns)),
		names:   make([]string, len(header)),
		vals:    make([][]byte, len(header)),
		ends:    make([]int, len(header)),
		spans:   make([]span, len(f.columns)),
	}
	for i := range b.pos {
		b.pos[i] = -1
	}
	for i, h := range header {
		name := h
		if f.encoding == Windows1252 {
			t, ok := appendCP1252(nil, h)
			if !ok {
				return nil, &FileError{Reason: "header column " + strconv.Itoa(i+1) + " is not valid windows-1252 text"}
			}
			name = t
		} else if !utf8.Valid(h) {
			return nil, &FileError{Reason: "header column " + strconv.Itoa(i+1) + " is not valid UTF-8"}
		}
		// A BOM the reader could not strip (a second one, or one inside
		// quotes) must not hide a column name.
		n := strings.TrimSpace(strings.TrimPrefix(string(name), "\ufeff"))
		b.names[i] = n
		for ci := range f.columns {
			if !strings.EqualFold(n, f.columns[ci].name) {
				continue
			}
			if b.pos[ci] >= 0 {
				return nil, &FileError{Reason: "duplicate column " + f.columns[ci].name}
			}
			b.pos[ci] = i
		}
	}
	var missing []string
	for ci, c := range f.columns {
		if b.pos[ci] < 0 && c.required {
			missing = append(missing, c.name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return nil, &FileError{Reason: "missing required column " + missing[0]}
	default:
		return nil, &FileError{Reason: "missing required columns " + strings.Join(missing, ", ")}
	}
	return b, nil
}

// Columns returns the number of fields every row must have: the header's.
func (b *Binding) Columns() int { return b.columns }

// Feed returns the bound feed.
func (b *Binding) Feed() *Feed { return b.feed }
