package order

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxLineas bounds the elements of any array in an order, checked on the
// text before decoding: encoding/json allocates an element per item before
// any rule sees it (a 10 MB body of "{}," is 3 million lines). It is far
// above any shop order.
const MaxLineas = 2000

// Lines is how many order lines Parse would decode from data, read from its
// text: 0 when Parse refuses the text before decoding it.
func Lines(data []byte) int {
	sh, err := scan(data)
	if err != nil || sh.longest > MaxLineas {
		return 0
	}
	return sh.longest
}

type shape struct {
	longest    int    // elements of the longest array held by a member of the top-level object
	longestKey []byte // that member's key, as sent
}

// textError is JSON text that encoding/json would not decode to the
// characters sent: invalid UTF-8 and unpaired surrogate escapes all become
// U+FFFD, so "A-\ud800" and "A-\udbff" would be one pedido_id. The code is
// the CSV path's (contract.CodeInvalidUTF8).
type textError struct {
	in    string // what the text is, when not an order body ("push body")
	field []byte // the top-level member being read; nil outside any
	msg   string
}

func (e *textError) Error() string {
	s := "invalid_utf8: "
	if e.in != "" {
		s += e.in + ": "
	}
	switch {
	case e.field != nil:
		s += fmt.Sprintf("%q: ", clipBytes(e.field, 64))
	case e.in == "":
		s += "body: "
	}
	return s + e.msg
}

func clipBytes(b []byte, n int) []byte { return b[:min(len(b), n)] }

// scan reads JSON text once, without decoding it: it refuses text whose
// decoding would change it and measures its arrays; the decoder checks the
// syntax after it.
func scan(b []byte) (shape, error) {
	var (
		sh      shape
		depth   int
		inStr   bool
		strAt   int    // where the string being read opened
		wantKey = true // at depth 1, the next string is a key
		key     []byte // the top-level member whose value is being read
		elems   int    // elements so far of the array at depth 2
		inElem  bool   // inside an element of that array
	)
	fail := func(format string, a ...any) (shape, error) {
		e := &textError{msg: fmt.Sprintf(format, a...)}
		if depth > 1 || depth == 1 && !wantKey {
			e.field = key
		}
		return sh, e
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return fail("byte %d (0x%02x) is not UTF-8", i, c)
			}
			i += size - 1
			continue
		}
		if inStr {
			switch c {
			case '"':
				inStr = false
				if depth == 1 && wantKey {
					key = b[strAt+1 : i]
				}
			case '\\':
				if r, ok := hex4(b, i+2); ok && b[i+1] == 'u' && utf16.IsSurrogate(r) {
					if low, ok := hex4(b, i+8); ok && r < 0xdc00 && b[i+6] == '\\' && b[i+7] == 'u' && low >= 0xdc00 && low <= 0xdfff {
						i += 11 // a pair: one character
						continue
					}
					return fail("unpaired surrogate escape %s at byte %d", b[i:i+6], i)
				}
				i++ // the escaped byte cannot close the string
			}
			continue
		}
		if depth == 2 && !inElem && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' && c != ']' && c != '}' {
			elems, inElem = elems+1, true
			if elems > sh.longest {
				sh.longest, sh.longestKey = elems, key
			}
		}
		switch c {
		case '"':
			inStr, strAt = true, i
		case '{', '[':
			depth++
			if depth == 2 {
				elems, inElem = 0, false
			}
		case '}', ']':
			depth--
		case ',':
			switch depth {
			case 1:
				wantKey = true
			case 2:
				inElem = false
			}
		case ':':
			if depth == 1 {
				wantKey = false
			}
		}
	}
	return sh, nil
}

// hex4 reads the four hex digits at b[i:], as a \u escape holds them.
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(n), err == nil
}
