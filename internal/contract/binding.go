package contract

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FileError rejects a whole file: its header does not fit the contract, so
// none of its rows can be read with confidence.
type FileError struct {
	Reason string // e.g. "missing required column cantidad"
	Drift  Drift  // the header's drift, when it could be read
}

// Drift is how a file's header differs from its contract: columns it has
// that the contract does not declare (their data is not loaded) and declared
// columns it lacks (loaded as NULL when optional).
type Drift struct {
	Added   []string `json:"added,omitempty"`   // in header order, as written (trimmed)
	Missing []string `json:"missing,omitempty"` // in declared order
}

func (d Drift) Empty() bool { return len(d.Added) == 0 && len(d.Missing) == 0 }

// Bounds on a Drift, which the ledger stores and the log repeats.
const (
	maxDriftColumns = 20
	maxDriftName    = 64
)

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
	num   []byte   // a NUMERIC value without its thousands separators
	strs  slab     // storage of the string values handed out
	drift Drift
}

// span locates a string value in the row arena; start < 0 means the value is
// already in out (NULL or an interned string).
type span struct{ start, end int }

// Bind maps a header row to the declared columns by name, in any order,
// case and surrounding spaces ignored; other columns are reported by Drift.
// A missing required column, a declared column given twice, an unknown one
// under on_unknown_columns: reject, or a header that is not text rejects the
// file with a *FileError.
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
		name, bad := h, ""
		switch {
		case bytes.IndexByte(h, 0) >= 0:
			bad = " holds a NUL byte"
		case f.charset != nil:
			var ok bool
			if name, ok = f.charset.append(nil, h); !ok {
				bad = " is not valid " + f.charset.name + " text"
			}
		case !utf8.Valid(h):
			bad = " is not valid UTF-8"
		}
		if bad != "" {
			return nil, &FileError{Reason: "header column " + strconv.Itoa(i+1) + bad}
		}
		// A BOM the reader could not strip (a second one, or one inside
		// quotes) must not hide a column name.
		n := strings.TrimSpace(strings.TrimPrefix(string(name), "\ufeff"))
		b.names[i] = n
		known := false
		for ci := range f.columns {
			if !strings.EqualFold(n, f.columns[ci].name) {
				continue
			}
			if b.pos[ci] >= 0 {
				return nil, &FileError{Reason: "duplicate column " + f.columns[ci].name}
			}
			b.pos[ci] = i
			known = true
		}
		if !known {
			b.drift.Added = appendDrift(b.drift.Added, n, i)
		}
	}
	var missing []string
	for ci, c := range f.columns {
		if b.pos[ci] >= 0 {
			continue
		}
		b.drift.Missing = appendDrift(b.drift.Missing, c.name, ci)
		if c.required {
			missing = append(missing, c.name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		return nil, &FileError{Reason: "missing required column " + missing[0], Drift: b.drift}
	default:
		return nil, &FileError{Reason: "missing required columns " + strings.Join(missing, ", "), Drift: b.drift}
	}
	if len(b.drift.Added) > 0 && f.onUnknown == UnknownReject {
		return nil, &FileError{Reason: "columns not in the contract (on_unknown_columns is reject): " + strings.Join(b.drift.Added, ", "), Drift: b.drift}
	}
	return b, nil
}

// appendDrift adds a column name to a drift list within its bounds. A
// header cell with no name is named by its position.
func appendDrift(list []string, name string, i int) []string {
	switch {
	case len(list) == maxDriftColumns:
		return append(list, "...")
	case len(list) > maxDriftColumns:
		return list
	case name == "":
		name = "#" + strconv.Itoa(i+1)
	case len(name) > maxDriftName:
		name = string(cutRunes([]byte(name), maxDriftName)) + "..."
	}
	return append(list, name)
}

func (b *Binding) Drift() Drift { return b.drift }

// Columns returns the number of fields every row must have: the header's.
func (b *Binding) Columns() int { return b.columns }

func (b *Binding) Feed() *Feed { return b.feed }
