package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseAcceptsFlagsAfterArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantPos []string
		wantObj string
	}{
		{name: "flags first", args: []string{"--object", "x/y.csv", "file.csv"}, wantPos: []string{"file.csv"}, wantObj: "x/y.csv"},
		{name: "flags after the file", args: []string{"file.csv", "--object", "x/y.csv"}, wantPos: []string{"file.csv"}, wantObj: "x/y.csv"},
		{name: "several positionals around a flag", args: []string{"SELECT", "--object=o", "1"}, wantPos: []string{"SELECT", "1"}, wantObj: "o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("drop", flag.ContinueOnError)
			obj := fs.String("object", "", "")
			pos, err := parse(fs, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantPos, pos); diff != "" {
				t.Errorf("positional (-want +got):\n%s", diff)
			}
			if *obj != tt.wantObj {
				t.Errorf("--object = %q, want %q", *obj, tt.wantObj)
			}
		})
	}
}

func TestDispatchErrorsAreOneClearLine(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown command", args: []string{"explode"}, want: `unknown command "explode"`},
		{name: "unknown flag", args: []string{"drop", "--nope", "f.csv"}, want: "drop: flag provided but not defined: -nope"},
		{name: "drop without a file", args: []string{"drop"}, want: "drop: want exactly one FILE"},
		{name: "bad drop format", args: []string{"drop", "f.csv", "--format", "xml"}, want: `drop: --format "xml": want text or json`},
		{name: "query without SQL", args: []string{"query"}, want: "query: want SQL"},
		{name: "server not running", args: []string{"query", "SELECT 1", "--server", "http://127.0.0.1:1"}, want: "is `alpipe serve` running?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := dispatch(context.Background(), tt.args, &out)
			if err == nil || !strings.Contains(oneLine(err), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if strings.Contains(oneLine(err), "\n") {
				t.Errorf("error spans lines: %q", oneLine(err))
			}
		})
	}
}
