package contract

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/charmap"

	"github.com/alpinashop/alpipe/internal/warehouse/schema"
)

// TestDialectDefaultsAndAccessors also checks that feeds come in file-name
// order, and that the first file's feed takes a name both match.
func TestDialectDefaultsAndAccessors(t *testing.T) {
	reg := mustParse(t, map[string][]byte{
		"b.json": []byte(goodDecl),
		"a.json": decl(t, `"feed": "f", "objects": "^x/.*\\.csv$", "table": "t", "encoding": "utf-8",`,
			`"feed": "g", "objects": "^x/", "table": "t", "encoding": "iso-8859-1", "quote": "'",
			 "delimiter": [";", ","], "thousands_separator": " ", "on_unknown_columns": "reject",
			 "date_formats": ["YYYY-MM-DD", "DD.MM.YYYY", "YYYYMMDD"],`),
	})
	type dialect struct {
		Name, Delimiters, Quote, Thousands, Encoding, Unknown string
		Dates                                                 []string
	}
	var got []dialect
	for _, f := range reg.Feeds() {
		got = append(got, dialect{f.Name(), string(f.dialect.delimiters), string(f.Quote()),
			string(f.dialect.thousands), f.Encoding(), f.OnUnknownColumns(), f.DateFormats()})
	}
	want := []dialect{
		{"g", ";,", "'", " ", "iso-8859-1", "reject", []string{"YYYY-MM-DD", "DD.MM.YYYY", "YYYYMMDD"}},
		{"f", ",", `"`, "\x00", "utf-8", "load", []string{"YYYY-MM-DD"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dialects (-want +got):\n%s", diff)
	}
	if f, _ := reg.Match("x/a.csv"); f.Name() != "g" {
		t.Errorf("Match took %s, want the first file's feed g", f.Name())
	}
}

func TestSniffDelimiter(t *testing.T) {
	reg := mustParse(t, map[string][]byte{
		"one.json":  []byte(goodDecl),
		"list.json": decl(t, `"feed": "f", "objects": "^x/.*\\.csv$"`, `"feed": "g", "objects": "^y/", "delimiter": [",", ";", "\t"]`),
	})
	one, _ := reg.Feed("f")
	list, _ := reg.Feed("g")
	tests := []struct {
		name   string
		feed   *Feed
		header string
		want   byte
	}{
		{name: "single delimiter is never sniffed", feed: one, header: "a;b;c\n", want: ','},
		{name: "comma", feed: list, header: "pedido_id,linea,fecha\r\nP;1;2\n", want: ','},
		{name: "semicolon, rows not looked at", feed: list, header: "pedido_id;linea;fecha\r\nP,1,2,3,4,5\n", want: ';'},
		{name: "tab", feed: list, header: "a\tb\tc", want: '\t'},
		{name: "more semicolons than commas", feed: list, header: "a,b;c;d\n", want: ';'},
		{name: "quoted separators do not count", feed: list, header: "\"a;b;c\",d,e\n", want: ','},
		{name: "tie goes to the first declared", feed: list, header: "a,b;c\n", want: ','},
		{name: "one column: the first declared", feed: list, header: "pedido_id\n", want: ','},
		{name: "empty", feed: list, header: "", want: ','},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.feed.SniffDelimiter([]byte(tt.header)); got != tt.want {
				t.Errorf("SniffDelimiter(%q) = %q, want %q", tt.header, got, tt.want)
			}
		})
	}
}

func TestDateLayouts(t *testing.T) {
	tests := []struct {
		name, layout, in, want string // want "" for a rejection
	}{
		{name: "day first slash", layout: "DD/MM/YYYY", in: "20/03/2026", want: "2026-03-20"},
		{name: "day first dot", layout: "DD.MM.YYYY", in: "29.02.2024", want: "2024-02-29"},
		{name: "month first", layout: "MM/DD/YYYY", in: "03/20/2026", want: "2026-03-20"},
		{name: "compact", layout: "YYYYMMDD", in: "20260320", want: "2026-03-20"},
		{name: "year first slash", layout: "YYYY/MM/DD", in: "2026/03/20", want: "2026-03-20"},
		{name: "wrong separator", layout: "DD/MM/YYYY", in: "20-03-2026"},
		{name: "not a leap year", layout: "DD/MM/YYYY", in: "29/02/2025"},
		{name: "month 13", layout: "DD/MM/YYYY", in: "01/13/2026"},
		{name: "unpadded", layout: "DD/MM/YYYY", in: "1/3/2026"},
		{name: "too long", layout: "DD/MM/YYYY", in: "20/03/20266"},
		{name: "letters", layout: "YYYYMMDD", in: "2026MA20"},
		{name: "year zero", layout: "DD/MM/YYYY", in: "01/01/0000"},
		// ISO, which every feed reads first; all of 1600..2400: TestParseDateEveryDay;
		// 2026-02-30 and 2026-13-01: TestGolden (bad_dates.csv), 2026-04-31: TestValidateOpiniones.
		{name: "no leap day 1900", layout: ISODate, in: "1900-02-29"},
		{name: "no leap day 2026", layout: ISODate, in: "2026-02-29"},
		{name: "month 0", layout: ISODate, in: "2026-00-10"},
		{name: "day 0", layout: ISODate, in: "2026-03-00"},
		{name: "year 0", layout: ISODate, in: "0000-01-01"},
		{name: "first day", layout: ISODate, in: "0001-01-01", want: "0001-01-01"},
		{name: "last day", layout: ISODate, in: "9999-12-31", want: "9999-12-31"},
		{name: "spanish order", layout: ISODate, in: "14/03/2026"},
		{name: "short", layout: ISODate, in: "2026-3-14"},
		{name: "time appended", layout: ISODate, in: "2026-03-14T10:00"},
		{name: "slashes", layout: ISODate, in: "2026/03/14"},
		{name: "letters ISO", layout: ISODate, in: "2026-0a-14"},
		{name: "empty", layout: ISODate, in: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := compileDateLayout(tt.layout) // parseDate for ISODate
			if err != nil {
				t.Fatal(err)
			}
			days, ok := l.parse([]byte(tt.in))
			got := ""
			if ok {
				got = schema.FormatDate(days)
			}
			if got != tt.want {
				t.Errorf("%s.parse(%q) = %q, want %q", tt.layout, tt.in, got, tt.want)
			}
		})
	}
}

func TestUngroup(t *testing.T) {
	tests := []struct {
		name, in string
		sep      byte
		want     string // "" for a rejection
	}{
		{name: "thousands", in: "1.234,50", sep: '.', want: "1234,50"},
		{name: "millions", in: "12.345.678,9", sep: '.', want: "12345678,9"},
		{name: "no decimals", in: "1.234", sep: '.', want: "1234"},
		{name: "negative", in: "-1.234,5", sep: '.', want: "-1234,5"},
		{name: "space", in: "1 234,5", sep: ' ', want: "1234,5"},
		{name: "apostrophe", in: "1'234'567", sep: '\'', want: "1234567"},
		{name: "group of two", in: "1.23,5", sep: '.'},
		{name: "group of four", in: "1.2345,5", sep: '.'},
		{name: "first group of four", in: "1234.567,5", sep: '.'},
		{name: "leading separator", in: ".234,5", sep: '.'},
		{name: "trailing separator", in: "1.234.,5", sep: '.'},
		{name: "double separator", in: "1..234", sep: '.'},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := ungroup(nil, []byte(tt.in), tt.sep)
			got := ""
			if ok {
				got = string(out)
			}
			if got != tt.want {
				t.Errorf("ungroup(%q, %q) = %q, %v; want %q", tt.in, tt.sep, out, ok, tt.want)
			}
		})
	}
}

func TestBindDrift(t *testing.T) {
	strict := mustParse(t, map[string][]byte{"f.json": decl(t, `"encoding": "utf-8",`,
		`"encoding": "utf-8", "on_unknown_columns": "reject",`)})
	loose := mustParse(t, map[string][]byte{"f.json": []byte(goodDecl)})
	long := strings.Repeat("x", 100)
	many := make([]string, 0, 30)
	for i := range 30 {
		many = append(many, "c"+string(rune('a'+i%26))+strings.Repeat("z", i/26))
	}
	tests := []struct {
		name   string
		reg    *Registry
		header []string
		want   Drift
		reason string // FileError; "" when the header binds
	}{
		{name: "exact header", reg: loose, header: []string{"id", "n", "p", "d"}},
		{name: "added column", reg: loose, header: []string{"id", "n", "canal", "p", "d"}, want: Drift{Added: []string{"canal"}}},
		{name: "added keeps the file's spelling", reg: loose, header: []string{"id", "n", " Canal ", "p", "d"}, want: Drift{Added: []string{"Canal"}}},
		{name: "unnamed column", reg: loose, header: []string{"id", "n", "p", "d", ""}, want: Drift{Added: []string{"#5"}}},
		{name: "long name cut", reg: loose, header: []string{"id", "n", "p", "d", long}, want: Drift{Added: []string{long[:64] + "..."}}},
		{name: "many columns bounded", reg: loose, header: append([]string{"id", "n", "p", "d"}, many...), want: Drift{Added: append(append([]string(nil), many[:20]...), "...")}},
		{name: "required missing rejects with drift", reg: loose, header: []string{"id", "n", "d", "canal"}, want: Drift{Added: []string{"canal"}, Missing: []string{"p"}}, reason: "missing required column p"},
		{name: "strict feed rejects an added column", reg: strict, header: []string{"id", "n", "p", "d", "canal", "origen"}, want: Drift{Added: []string{"canal", "origen"}}, reason: "columns not in the contract (on_unknown_columns is reject): canal, origen"},
		{name: "strict feed loads an exact header", reg: strict, header: []string{"D", "P", "N", "ID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := tt.reg.Feed("f")
			b, err := f.Bind(bytesOf(tt.header...))
			var got Drift
			reason := ""
			var fe *FileError
			switch {
			case errors.As(err, &fe):
				got, reason = fe.Drift, fe.Reason
			case err != nil:
				t.Fatal(err)
			default:
				got = b.Drift()
			}
			if reason != tt.reason {
				t.Errorf("reason %q, want %q", reason, tt.reason)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
			if got.Empty() != (len(tt.want.Added)+len(tt.want.Missing) == 0) {
				t.Errorf("Empty() = %v", got.Empty())
			}
		})
	}
}

// TestCodePagesAgainstXText decodes text through charsets[Windows1252],
// then each of the 256 bytes alone, in both code pages, against x/text's
// decoder: the same text for every byte the code page defines, and a
// refusal (with its reject code) for the five Windows-1252 leaves
// undefined, which x/text decodes to U+FFFD. ISO-8859-1 defines all 256.
func TestCodePagesAgainstXText(t *testing.T) {
	cs := charsets[Windows1252]
	if cs.code != CodeInvalidCP1252 {
		t.Errorf("reject code %q, want %q", cs.code, CodeInvalidCP1252)
	}
	type decoded struct {
		Text string
		OK   bool
	}
	tests := []struct {
		name string
		in   string
		want decoded
	}{
		{name: "ASCII", in: "Munoz", want: decoded{Text: "Munoz", OK: true}},
		{name: "spanish letters", in: "Mu\xf1oz Ib\xe1\xf1ez", want: decoded{Text: "Muñoz Ibáñez", OK: true}},
		{name: "euro and quotes", in: "\x80 \x93ok\x94", want: decoded{Text: "€ “ok”", OK: true}},
		{name: "undefined 0x81 after a letter", in: "a\x81b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := cs.append(nil, []byte(tt.in))
			got := decoded{OK: ok}
			if ok {
				got.Text = string(out) // what was appended before a refusal does not count
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tt.in, diff)
			}
		})
	}
	// Every byte against x/text, which decodes an undefined byte to U+FFFD.
	for name, cm := range map[string]*charmap.Charmap{
		Windows1252: charmap.Windows1252,
		ISO88591:    charmap.ISO8859_1,
	} {
		var want, got [256]decoded
		for c := range 256 {
			std, err := cm.NewDecoder().Bytes([]byte{byte(c)})
			if err != nil {
				t.Fatalf("x/text on byte %#x: %v", c, err)
			}
			if string(std) != string(utf8.RuneError) {
				want[c] = decoded{Text: string(std), OK: true}
			}
			out, ok := charsets[name].append(nil, []byte{byte(c)})
			got[c] = decoded{Text: string(out), OK: ok}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("charsets[%s] against x/text, indexed by byte (-want +got):\n%s", name, diff)
		}
	}
}

func TestPlainText(t *testing.T) {
	inputs := []string{"", "a", "PED-2026-0000001", "1234567", "12345678", "123456789", "\x00", "abcdefg\x00", "abcdefgh\x00", "\x01\x01\x01\x01\x01\x01\x01\x00", "\x00\x01\x01\x01\x01\x01\x01\x01", "Pérez", "abcdefgh\x80", "\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f"}
	// Every position of a NUL or a high byte in values of 1 to 24 bytes.
	for n := 1; n <= 24; n++ {
		for i := range n {
			for _, c := range []byte{0, 0x80, 0xff, 0x01} {
				b := []byte(strings.Repeat("a", n))
				b[i] = c
				inputs = append(inputs, string(b))
			}
		}
	}
	for _, in := range inputs {
		want := !strings.ContainsFunc(in, func(r rune) bool { return r == 0 || r >= 0x80 })
		if got := plainText([]byte(in)); got != want {
			t.Errorf("plainText(%q) = %v", in, got)
		}
	}
}
