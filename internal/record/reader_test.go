package record

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// rec is a Record copied out of the reader's buffers, so tests can keep it.
type rec struct {
	Line    int
	Fields  []string
	Raw     string
	Problem string
}

// collect reads every record of src; copyAll disables the in-place paths.
func collect(t *testing.T, src io.Reader, opt Options, copyAll bool) []rec {
	t.Helper()
	r := NewReader(src, opt)
	r.copyAll = copyAll
	out, err := readAll(r)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Next after %d records: %v", len(out), err)
	}
	return out
}

// readAll reads records until Next fails, and returns them with the error.
func readAll(r *Reader) ([]rec, error) {
	var out []rec
	for len(out) <= 1_000_000 { // a reader that does not stop
		got, err := r.Next()
		if err != nil {
			return out, err
		}
		out = append(out, copyRec(got))
	}
	return out, errors.New("reader does not stop")
}

// feeders deliver the same bytes in differently sized reads, so that every
// case also crosses buffer refills at every possible position.
var feeders = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one_byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data_with_eof", iotest.DataErrReader},
}

// readers are the two ways of assembling records, which must agree.
var readers = []struct {
	name    string
	copyAll bool
}{{"in_place", false}, {"copying", true}}

func f(s ...string) []string { return s }

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opt  Options
		want []rec
	}{
		{name: "empty input", in: "", want: nil},
		{name: "only line feeds", in: "\n\r\n\n", want: nil},
		{name: "only a BOM", in: "\xEF\xBB\xBF", want: nil},
		{name: "lf", in: "a,b\nc,d\n", want: []rec{{1, f("a", "b"), "a,b", ""}, {2, f("c", "d"), "c,d", ""}}},
		{name: "crlf", in: "a,b\r\nc,d\r\n", want: []rec{{1, f("a", "b"), "a,b", ""}, {2, f("c", "d"), "c,d", ""}}},
		{name: "no final line end", in: "a,b\nc,d", want: []rec{{1, f("a", "b"), "a,b", ""}, {2, f("c", "d"), "c,d", ""}}},
		{name: "final CR without LF", in: "a,b\nc,d\r", want: []rec{{1, f("a", "b"), "a,b", ""}, {2, f("c", "d"), "c,d", ""}}},
		{name: "CR inside a line is content", in: "a\rb,c\n", want: []rec{{1, f("a\rb", "c"), "a\rb,c", ""}}},
		{name: "BOM stripped once", in: "\xEF\xBB\xBFid,n\n\xEF\xBB\xBFx,1\n", want: []rec{{1, f("id", "n"), "id,n", ""}, {2, f("\xEF\xBB\xBFx", "1"), "\xEF\xBB\xBFx,1", ""}}},
		{name: "BOM then quoted header", in: "\xEF\xBB\xBF\"id\",n\r\n", want: []rec{{1, f("id", "n"), `"id",n`, ""}}},
		{name: "blank lines skipped and counted", in: "a\n\n\r\nb\n\n\n", want: []rec{{1, f("a"), "a", ""}, {4, f("b"), "b", ""}}},
		{name: "lines of carriage returns are blank", in: "a\n\r\r\n\r\r\r\nb\r\r\n\r\r", want: []rec{{1, f("a"), "a", ""}, {4, f("b\r"), "b\r", ""}}},
		{name: "empty fields", in: ",,\n,\"\",\n", want: []rec{{1, f("", "", ""), ",,", ""}, {2, f("", "", ""), `,"",`, ""}}},
		{name: "one empty quoted field is not blank", in: "\"\"\n", want: []rec{{1, f(""), `""`, ""}}},
		{name: "quoted comma", in: "1,\"89,90\",ES\n", want: []rec{{1, f("1", "89,90", "ES"), `1,"89,90",ES`, ""}}},
		{name: "escaped quotes", in: "\"say \"\"hi\"\"\",\"\"\"\"\n", want: []rec{{1, f(`say "hi"`, `"`), `"say ""hi""",""""`, ""}}},
		{
			name: "quoted newlines keep the start line",
			in:   "h\n\"a\nb\nc\",x\nnext\n",
			want: []rec{{1, f("h"), "h", ""}, {2, f("a\nb\nc", "x"), "\"a\nb\nc\",x", ""}, {5, f("next"), "next", ""}},
		},
		{
			name: "quoted CRLF is content",
			in:   "\"a\r\nb\"\r\nz\r\n",
			want: []rec{{1, f("a\r\nb"), "\"a\r\nb\"", ""}, {3, f("z"), "z", ""}},
		},
		{name: "quoted field closing at end of input", in: `x,"y"`, want: []rec{{1, f("x", "y"), `x,"y"`, ""}}},
		{name: "quoted field closing before CR at end of input", in: "x,\"y\"\r", want: []rec{{1, f("x", "y"), `x,"y"`, ""}}},
		{name: "bare quote", in: "a,b\"c,d\nok\n", want: []rec{{1, nil, `a,b"c,d`, ProblemBareQuote}, {2, f("ok"), "ok", ""}}},
		{name: "bare quote does not open a field", in: "a\"\nb\"\nok\n", want: []rec{{1, nil, `a"`, ProblemBareQuote}, {2, nil, `b"`, ProblemBareQuote}, {3, f("ok"), "ok", ""}}},
		{name: "text after closing quote", in: "\"a\"b,c\nok\n", want: []rec{{1, nil, `"a"b,c`, ProblemAfterQuote}, {2, f("ok"), "ok", ""}}},
		{name: "unterminated quote at end of input", in: "a\n\"b,c\nd\n", want: []rec{{1, f("a"), "a", ""}, {2, nil, "\"b,c", ProblemUnterminatedQuote}, {3, f("d"), "d", ""}}},
		{name: "unterminated quote on the last line", in: "a\n\"b,c", want: []rec{{1, f("a"), "a", ""}, {2, nil, "\"b,c", ProblemUnterminatedQuote}}},
		{name: "unterminated quote, CRLF", in: "\"b\r\nc\r\n", want: []rec{{1, nil, "\"b", ProblemUnterminatedQuote}, {2, f("c"), "c", ""}}},
		{
			name: "stray quote closed by a quoted value of a later line",
			in:   "x,\"1,2\nz,9\nz,\"3,4\",w\nok\n",
			want: []rec{{1, nil, "x,\"1,2", ProblemUnterminatedQuote}, {2, f("z", "9"), "z,9", ""}, {3, f("z", "3,4", "w"), "z,\"3,4\",w", ""}, {4, f("ok"), "ok", ""}},
		},
		{
			name: "quote closed on a later line, then a bare quote",
			in:   "\"a\nb\",c\"d\nok\n",
			want: []rec{{1, nil, "\"a", ProblemUnterminatedQuote}, {2, nil, "b\",c\"d", ProblemBareQuote}, {3, f("ok"), "ok", ""}},
		},
		{
			name: "quoted field open at the end of a line of exactly the limit",
			in:   "\"abcd\nok\n",
			opt:  Options{MaxRecordBytes: 5},
			want: []rec{{1, nil, "\"abcd", ProblemUnterminatedQuote}, {2, f("ok"), "ok", ""}},
		},
		{
			name: "quoted newline within the limit is content",
			in:   "\"ab\ncd\",e\nok\n",
			opt:  Options{MaxRecordBytes: 9},
			want: []rec{{1, f("ab\ncd", "e"), "\"ab\ncd\",e", ""}, {3, f("ok"), "ok", ""}},
		},
		{name: "semicolon separator", in: "a;\"b;c\";d\n", opt: Options{Comma: ';'}, want: []rec{{1, f("a", "b;c", "d"), `a;"b;c";d`, ""}}},
		{name: "comma is data with another separator", in: "1,5;x\n", opt: Options{Comma: ';'}, want: []rec{{1, f("1,5", "x"), "1,5;x", ""}}},
		{name: "single quote as quote", in: "a;'b;''c''';\"d\"\n", opt: Options{Comma: ';', Quote: '\''}, want: []rec{{1, f("a", "b;'c'", `"d"`), `a;'b;''c''';"d"`, ""}}},
		{name: "single quote spanning lines", in: "'a\nb',c\n", opt: Options{Quote: '\''}, want: []rec{{1, f("a\nb", "c"), "'a\nb',c", ""}}},
		{name: "double quote is data with another quote", in: "x\"y,z\n", opt: Options{Quote: '\''}, want: []rec{{1, f(`x"y`, "z"), `x"y,z`, ""}}},
		{name: "bare single quote", in: "ab'c,d\n", opt: Options{Quote: '\''}, want: []rec{{1, nil, "ab'c,d", ProblemBareQuote}}},
		{
			name: "record of exactly the limit",
			in:   "abcde\r\nok\n",
			opt:  Options{MaxRecordBytes: 5},
			want: []rec{{1, f("abcde"), "abcde", ""}, {2, f("ok"), "ok", ""}},
		},
		{
			name: "over-long line truncated then resync",
			in:   "abcdefgh\nok\n",
			opt:  Options{MaxRecordBytes: 5},
			want: []rec{{1, nil, "abcde", "record longer than 5 bytes"}, {2, f("ok"), "ok", ""}},
		},
		{
			name: "over-long last line without line feed",
			in:   "ok\nabcdefgh",
			opt:  Options{MaxRecordBytes: 5},
			want: []rec{{1, f("ok"), "ok", ""}, {2, nil, "abcde", "record longer than 5 bytes"}},
		},
		{
			name: "over-long line resyncs at its LF ignoring quotes",
			in:   "\"abcdefg\"h,\"\nok\n",
			opt:  Options{MaxRecordBytes: 6},
			want: []rec{{1, nil, "\"abcde", "record longer than 6 bytes"}, {2, f("ok"), "ok", ""}},
		},
		{
			name: "quoted record going over the limit on its next line",
			in:   "\"ab\ncdefg\"h,\"\nok\n",
			opt:  Options{MaxRecordBytes: 6},
			want: []rec{{1, nil, "\"ab", ProblemUnterminatedQuote}, {2, nil, "cdefg\"", "record longer than 6 bytes"}, {3, f("ok"), "ok", ""}},
		},
		{
			name: "stray quote swallows no line",
			in:   "\"x\nl2\nl3\nl4\nl5\n",
			opt:  Options{MaxRecordBytes: 8},
			want: []rec{{1, nil, "\"x", ProblemUnterminatedQuote}, {2, f("l2"), "l2", ""}, {3, f("l3"), "l3", ""}, {4, f("l4"), "l4", ""}, {5, f("l5"), "l5", ""}},
		},
		{
			name: "non UTF-8 bytes pass through",
			in:   "caf\xe9,\xff\x00\n",
			want: []rec{{1, f("caf\xe9", "\xff\x00"), "caf\xe9,\xff\x00", ""}},
		},
	}
	for _, tt := range tests {
		for _, fd := range feeders {
			for _, rd := range readers {
				t.Run(tt.name+"/"+fd.name+"/"+rd.name, func(t *testing.T) {
					got := collect(t, fd.wrap(strings.NewReader(tt.in)), tt.opt, rd.copyAll)
					if diff := cmp.Diff(tt.want, got); diff != "" {
						t.Errorf("records (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// TestReaderCopyRest streams the rest of over-long lines: Raw plus the rest
// is the line, without its line end, whatever the read sizes.
func TestReaderCopyRest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // per record: Raw, then what CopyRest wrote
		copy bool     // call CopyRest; otherwise Next skips the rest
	}{
		{name: "crlf", in: "h\nabcdefgh\r\nok\n", want: []string{"h", "", "abcde", "fgh", "ok", ""}, copy: true},
		{name: "quotes are not looked at", in: "\"bcde\"\"h\n\"\nok\n", want: []string{"\"bcde", "\"\"h", "\"", "", "ok", ""}, copy: true},
		{name: "CR inside the rest is content", in: "abcdef\rg\r\r\nok", want: []string{"abcde", "f\rg\r", "ok", ""}, copy: true},
		{name: "rest ends the input", in: "abcdefgh\r", want: []string{"abcde", "fgh"}, copy: true},
		{name: "skipped by Next", in: "abcdefgh\r\nok\n", want: []string{"abcde", "", "ok", ""}},
	}
	for _, tt := range tests {
		for _, fd := range feeders {
			t.Run(tt.name+"/"+fd.name, func(t *testing.T) {
				r := NewReader(fd.wrap(strings.NewReader(tt.in)), Options{MaxRecordBytes: 5})
				var got []string
				for rec, err := r.Next(); !errors.Is(err, io.EOF); rec, err = r.Next() {
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, string(rec.Raw))
					var rest strings.Builder
					if tt.copy {
						n, err := r.CopyRest(&rest)
						if err != nil || n != int64(rest.Len()) {
							t.Fatalf("CopyRest = %d, %v; wrote %d", n, err, rest.Len())
						}
						if rec.Long != (rest.Len() > 0) {
							t.Errorf("line %d: Long = %v with a rest of %q", rec.Line, rec.Long, rest.String())
						}
					}
					got = append(got, rest.String())
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("raw and rest (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestReaderStrayQuoteBeforeManyRows: a row opens a quote it never closes,
// far more than MaxRecordBytes of valid rows follow; only that row is rejected.
func TestReaderStrayQuoteBeforeManyRows(t *testing.T) {
	const rows = 30000
	var sb strings.Builder
	sb.WriteString("h1,h2\r\nP-0,\"89,90\r\n")
	want := []rec{{1, f("h1", "h2"), "h1,h2", ""}, {2, nil, "P-0,\"89,90", ProblemUnterminatedQuote}}
	for i := 1; i <= rows; i++ {
		line := fmt.Sprintf("P-%d,%d,2026-03-14,MOCH-40L-AZ,1,9.90,CLI-1,ES", i, i)
		sb.WriteString(line + "\r\n")
		want = append(want, rec{i + 2, strings.Split(line, ","), line, ""})
	}
	for _, fd := range feeders[:2] {
		t.Run(fd.name, func(t *testing.T) {
			got := collect(t, fd.wrap(strings.NewReader(sb.String())), Options{}, false)
			if !reflect.DeepEqual(want, got) { // cmp.Diff is slow on 30,000 records
				t.Errorf("records (-want +got):\n%.3000s", cmp.Diff(want, got))
			}
		})
	}
}

// chunks returns one part per Read, the last one with err.
type chunks struct {
	parts []string
	err   error
}

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, c.err
	}
	n := copy(p, c.parts[0])
	c.parts = c.parts[1:]
	if len(c.parts) == 0 {
		return n, c.err
	}
	return n, nil
}

// TestReaderAcrossBufferBoundary puts records of every kind on both sides of
// the 64 KiB refill boundary.
func TestReaderAcrossBufferBoundary(t *testing.T) {
	for pad := bufSize - 12; pad <= bufSize+2; pad++ {
		filler := strings.Repeat("x", pad)
		in := filler + "\r\n\"q,\r\n\"\"z\"\"\",1\r\nlast\r\n"
		got := collect(t, strings.NewReader(in), Options{}, false)
		want := []rec{{1, f(filler), filler, ""}, {2, f("q,\r\n\"z\"", "1"), "\"q,\r\n\"\"z\"\"\",1", ""}, {4, f("last"), "last", ""}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pad %d: records (-want +got):\n%s", pad, diff)
		}
	}
}

func TestReaderIOError(t *testing.T) {
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		src  io.Reader
		want []rec
	}{
		{name: "before any byte", src: iotest.ErrReader(boom)},
		{name: "after whole records", src: io.MultiReader(strings.NewReader("a\nb\n"), iotest.ErrReader(boom)), want: []rec{{1, f("a"), "a", ""}, {2, f("b"), "b", ""}}},
		{name: "inside a record", src: io.MultiReader(strings.NewReader("a\n\"b"), iotest.ErrReader(boom)), want: []rec{{1, f("a"), "a", ""}}},
		// The lines read again after a stray quote come before the error,
		// which arrives after a refill dropped the line to read again.
		{name: "after a rewind", src: &chunks{parts: []string{"\"a\n", "b\"", "x\nz"}, err: boom},
			want: []rec{{1, nil, `"a`, ProblemUnterminatedQuote}, {2, nil, `b"x`, ProblemBareQuote}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(tt.src, Options{})
			got, err := readAll(r)
			if !errors.Is(err, boom) {
				t.Errorf("error = %v, want %v", err, boom)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if _, again := r.Next(); !errors.Is(again, boom) {
				t.Errorf("second error = %v, want it sticky", again)
			}
		})
	}
}

func TestReaderHugeLineIsBounded(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() {
		size = 64 << 20
	}
	for _, c := range []byte{'x', '"'} { // a plain line and an endless quoted field
		t.Run(string(c), func(t *testing.T) {
			line := io.LimitReader(&repeat{s: strings.Repeat(string(c), bufSize)}, size)
			src := io.MultiReader(line, strings.NewReader("\nafter,1\n"))
			r := NewReader(src, Options{})
			got, err := readAll(r)
			long := strings.Repeat(string(c), DefaultMaxRecordBytes)
			want := []rec{{1, nil, long, "record longer than 1048576 bytes"},
				{2, f("after", "1"), "after,1", ""}}
			if diff := cmp.Diff(want, got); diff != "" || !errors.Is(err, io.EOF) {
				t.Errorf("records, then %v (-want +got):\n%.2000s", err, diff)
			}
			if held := cap(r.raw) + cap(r.data) + cap(r.buf); held > 2*DefaultMaxRecordBytes+bufSize {
				t.Errorf("reader holds %d bytes after a %d-byte line", held, size)
			}
		})
	}
}

func copyRec(g Record) rec {
	c := rec{Line: g.Line, Raw: string(g.Raw), Problem: g.Problem}
	if g.Fields != nil { // nil and empty stay apart
		c.Fields = make([]string, 0, len(g.Fields))
	}
	for _, x := range g.Fields {
		c.Fields = append(c.Fields, string(x))
	}
	return c
}

// TestReaderMatchesEncodingCSV compares with encoding/csv on random
// well-formed input without CR (which it turns into LF in quotes).
func TestReaderMatchesEncodingCSV(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", ",", "\"", "\n", " ", "é", "\"\"", "\",\""}
	compared := 0
	for iter := 0; iter < 20000; iter++ {
		var sb strings.Builder
		for n := rng.IntN(40); n > 0; n-- {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		in := sb.String()
		std := csv.NewReader(strings.NewReader(in))
		std.FieldsPerRecord = -1
		want, err := std.ReadAll()
		if err != nil {
			continue // malformed for the standard library too
		}
		compared++
		got := collect(t, strings.NewReader(in), Options{}, false)
		var gotFields [][]string
		for _, g := range got {
			if g.Problem != "" {
				t.Fatalf("input %q: unexpected problem %q", in, g.Problem)
			}
			gotFields = append(gotFields, g.Fields)
		}
		if diff := cmp.Diff(want, gotFields, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("input %q (-encoding/csv +record):\n%s", in, diff)
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d well-formed inputs compared", compared)
	}
}

func TestReaderNoAllocsInSteadyState(t *testing.T) {
	line := "P-1,1,2026-03-14,MOCH-40L-AZ,2,\"89,90\",C-9,ES\r\nP-2,1,2026-03-14,GUA-M,1,12.5,,FR\r\n"
	src := &repeat{s: line}
	r := NewReader(src, Options{})
	for i := 0; i < 10000; i++ { // grow every buffer once
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(10000, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per record, want 0", allocs)
	}
}

// repeat repeats s forever.
type repeat struct {
	s   string
	off int
}

func (p *repeat) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		c := copy(b[n:], p.s[p.off:])
		n += c
		p.off = (p.off + c) % len(p.s)
	}
	return n, nil
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"a,b\r\n", "\"a\n\"\"b\",c\n", "\xEF\xBB\xBFx", "\"", "a\"b\n\n", "\"a\"b", ",\r\r\n"} {
		f.Add([]byte(s), 4)
	}
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit <= 0 || limit > 64 {
			limit = 16
		}
		opt := Options{MaxRecordBytes: limit}
		whole := collect(t, bytes.NewReader(in), opt, false)
		bytewise := collect(t, iotest.OneByteReader(bytes.NewReader(in)), opt, false)
		if diff := cmp.Diff(whole, bytewise); diff != "" {
			t.Fatalf("read size changes the result (-whole +bytewise):\n%s", diff)
		}
		copied := collect(t, bytes.NewReader(in), opt, true)
		if diff := cmp.Diff(whole, copied); diff != "" {
			t.Fatalf("in-place and copying paths differ (-in place +copying):\n%s", diff)
		}
		last := 0
		for _, r := range whole {
			if r.Line <= last {
				t.Fatalf("line %d after line %d", r.Line, last)
			}
			last = r.Line
			if len(r.Raw) > limit {
				t.Fatalf("raw of %d bytes over the %d limit", len(r.Raw), limit)
			}
			if (r.Problem == "") == (r.Fields == nil) {
				t.Fatalf("record %+v: fields must be set exactly when there is no problem", r)
			}
		}
	})
}
