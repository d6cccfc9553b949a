package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/alpinashop/alpipe/internal/contract"
	"github.com/alpinashop/alpipe/internal/contract/contracttest"
	"github.com/alpinashop/alpipe/internal/record"
	"github.com/alpinashop/alpipe/internal/warehouse"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecode(t *testing.T) {
	text := []byte("pedido_id,linea\r\nP-1,1\r\n")
	// 8 MiB of line feeds: about 1000 times smaller compressed.
	bomb := gz(t, append(bytes.Clone(text), bytes.Repeat([]byte{'\n'}, 8<<20)...))
	good := gz(t, text)
	outage := errors.New("connection reset")
	tests := []struct {
		name     string
		src      io.Reader
		object   string
		stored   int64  // the event's object size
		want     string // decoded text, when no error
		reject   string // whole-file reason (prefix)
		failWith error  // a transient error, wrapped
	}{
		{name: "plain text passes", src: bytes.NewReader(text), object: "a.csv", want: string(text)},
		{name: "empty passes", src: bytes.NewReader(nil), object: "a.csv", want: ""},
		{name: "one byte passes", src: strings.NewReader("x"), object: "a.csv", want: "x"},
		{name: "gzip by its magic", src: bytes.NewReader(good), object: "a.csv", want: string(text)},
		{name: "gzip one byte at a time", src: iotest.OneByteReader(bytes.NewReader(good)), object: "a.csv.gz", want: string(text)},
		{name: "two gzip members", src: bytes.NewReader(append(gz(t, text[:10]), gz(t, text[10:])...)), object: "a.csv.gz", want: string(text)},
		{name: "bomb under the default ratio", src: bytes.NewReader(bomb), object: "a.csv.gz", reject: "gzip expands more than 200 times"},
		{name: "transcoded by the store, within its stored size", src: bytes.NewReader(text), object: "a.csv", stored: int64(len(good)), want: string(text)},
		{name: "transcoded bomb: plain text past the stored size", src: bytes.NewReader(bytes.Repeat([]byte{'\n'}, 4<<20)), object: "a.csv", stored: 1000, reject: "content expands more than 200 times its stored 1000 bytes"},
		{name: "truncated stream", src: bytes.NewReader(good[:len(good)-10]), object: "a.csv.gz", reject: "gzip: unexpected EOF"},
		{name: "corrupt checksum", src: bytes.NewReader(append(bytes.Clone(good[:len(good)-8]), 1, 2, 3, 4, byte(len(text)), 0, 0, 0)), object: "a.csv.gz", reject: "gzip: invalid checksum"},
		{name: "corrupt header", src: bytes.NewReader([]byte{0x1f, 0x8b, 0x99, 0}), object: "a.csv.gz", reject: "gzip: "},
		{name: "gz name, not gzip", src: bytes.NewReader(text), object: "a.csv.gz", reject: "named .gz but not gzip content"},
		{name: "store outage mid-stream is transient", src: io.MultiReader(bytes.NewReader(good[:len(good)-10]), iotest.ErrReader(outage)), object: "a.csv.gz", failWith: outage},
		{name: "store outage on plain text is the store's", src: io.MultiReader(bytes.NewReader(text), iotest.ErrReader(outage)), object: "a.csv", failWith: outage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode(tt.src, tt.object, tt.stored)
			var got []byte
			if err == nil {
				got, err = io.ReadAll(r)
			}
			reason, rejected := Rejection(err)
			switch {
			case tt.reject != "":
				if !rejected || !strings.HasPrefix(reason, tt.reject) {
					t.Fatalf("error %v, want a rejection %q...", err, tt.reject)
				}
			case tt.failWith != nil:
				if rejected || !errors.Is(err, tt.failWith) {
					t.Fatalf("error %v (rejection %v), want the transient %v", err, rejected, tt.failWith)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tt.want:
				t.Errorf("decoded %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBinary(t *testing.T) {
	const nul = "binary content: NUL byte in the first 8000 bytes"
	tests := []struct {
		name string
		head string
		want string // BinaryReason's prefix, "" for text
	}{
		{name: "text", head: "a,b\r\n1,2\r\n"},
		{name: "png", head: "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", want: nul},
		{name: "nul in the header line", head: "a\x00b,c\n1,2\n", want: nul},
		{name: "one nul in a row", head: "a,b\n" + strings.Repeat("1,2\n", 100) + "1,\x002\n"},
		{name: "nuls everywhere", head: "a,b\n" + strings.Repeat("1\x00\x00\x00,2\n", 100), want: nul},
		{name: "UTF-16", head: "\xff\xfep\x00e\x00d\x00", want: "UTF-16 text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BinaryReason([]byte(tt.head))
			if !strings.HasPrefix(got, tt.want) || (got == "") != (tt.want == "") {
				t.Errorf("BinaryReason = %q, want %q...", got, tt.want)
			}
		})
	}
}

// BenchmarkGzipParseValidate is the ingest's pure path for a gzip export:
// decompression with its expansion bound, record reader, contract
// validation. Compare with contract.BenchmarkParseValidate.
func BenchmarkGzipParseValidate(b *testing.B) {
	plain := contracttest.OrderLines(200_000) // the rows contract.BenchmarkParseValidate reads
	data := gz(b, plain)
	reg, err := contract.Default()
	if err != nil {
		b.Fatal(err)
	}
	f, _ := reg.Feed("lineas_pedido")
	out := make([]warehouse.Value, f.Width())
	b.SetBytes(int64(len(plain)))
	b.ReportAllocs()
	b.ResetTimer()
	total := 0
	for range b.N {
		text, err := Decode(bytes.NewReader(data), "p.csv.gz", int64(len(data)))
		if err != nil {
			b.Fatal(err)
		}
		r := record.NewReader(text, record.Options{})
		h, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		bind, err := f.Bind(h.Fields)
		if err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if rej := bind.Validate(rec.Fields, out); !rej.OK() {
				b.Fatalf("line %d: %+v", rec.Line, rej)
			}
			total++
		}
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(total), "ns/row")
}
