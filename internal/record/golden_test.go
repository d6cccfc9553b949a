package record

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenLimit keeps the over-long fixture small.
const goldenLimit = 256

// TestGolden reads every fixture in testdata and compares what the reader
// returns, rendered as quoted Go strings so that every byte shows, with
// <fixture>.golden.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(in), func(t *testing.T) {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, string(b))
			golden := in + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
	if n < 10 {
		t.Fatalf("only %d fixtures found", n)
	}
}

func render(t *testing.T, in string) string {
	t.Helper()
	recs, n := collect(t, strings.NewReader(in), Options{MaxRecordBytes: goldenLimit})
	var sb strings.Builder
	for _, r := range recs {
		if r.Problem != "" {
			fmt.Fprintf(&sb, "line %d problem %q raw %q\n", r.Line, r.Problem, r.Raw)
			continue
		}
		fmt.Fprintf(&sb, "line %d fields %q\n", r.Line, r.Fields)
	}
	fmt.Fprintf(&sb, "EOF after %d records, %d bytes\n", len(recs), n)
	return sb.String()
}
