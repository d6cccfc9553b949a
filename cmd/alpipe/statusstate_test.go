package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/ledger"
)

func TestParseState(t *testing.T) {
	tests := []struct {
		name, in string
		want     ledger.State
		wantErr  string
	}{
		{name: "upper case", in: "FAILED", want: ledger.Failed},
		{name: "lower case", in: "in_progress", want: ledger.InProgress},
		{name: "unknown names the valid ones", in: "LOST", wantErr: "want one of IN_PROGRESS, DONE, REJECTED, SKIPPED, DUPLICATE, FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseState(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseState(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestFilesInStateNewestFirstAndBounded(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 3, 14, h, 0, 0, 0, time.UTC) }
	rec := func(obj string, st ledger.State, h int) ledger.Record {
		return ledger.Record{Key: ledger.Key{Bucket: "b", Object: obj, Generation: int64(h)}, State: st, StartedAt: at(h), Reason: "load: backend\nunavailable"}
	}
	recs := []ledger.Record{rec("a.csv", ledger.Failed, 1), rec("b.csv", ledger.Done, 2), rec("c.csv", ledger.Failed, 3), rec("d.csv", ledger.Failed, 2)}
	var out bytes.Buffer
	if err := filesInState(recs, ledger.Failed, 2, "text", &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"started               generation  object        reason",
		"2026-03-14 03:00 UTC           3  gs://b/c.csv  load: backend unavailable",
		"2026-03-14 02:00 UTC           2  gs://b/d.csv  load: backend unavailable",
		"(2 files in state FAILED; 1 more: raise --files)",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimRight(out.String(), "\n"), "\n")); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestWithoutFlag(t *testing.T) {
	got := withoutFlag([]string{"--watch", "10s", "--since", "1h", "-watch=5s", "--format=json"}, "watch")
	if diff := cmp.Diff([]string{"--since", "1h", "--format=json"}, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

func TestWatchRepeatsTheReport(t *testing.T) {
	var out bytes.Buffer
	n := 0
	err := watch(context.Background(), time.Millisecond, 3, &out, func() error { n++; out.WriteString("report\n"); return nil })
	if err != nil || n != 3 || strings.Count(out.String(), "Ctrl-C stops") != 3 {
		t.Errorf("watch ran the report %d times (err %v):\n%s", n, err, out.String())
	}
}

func TestOneLineReasonKeepsWholeLetters(t *testing.T) {
	got := oneLineReason(strings.Repeat("é", 130))
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "...") || utf8.RuneCountInString(got) != 120 {
		t.Errorf("oneLineReason cut %q (valid UTF-8: %v, %d runes)", got, utf8.ValidString(got), utf8.RuneCountInString(got))
	}
}
