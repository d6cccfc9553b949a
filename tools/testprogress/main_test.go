package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lines hands each write to the test, dropping what it does not read.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default:
	}
	return len(p), nil
}

func TestRun(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{
			name: "packages in the order they finish",
			in: []string{
				`{"Action":"start","Package":"a"}`,
				`{"Action":"start","Package":"b"}`,
				`{"Action":"run","Package":"b","Test":"TestB"}`,
				`{"Action":"output","Package":"b","Test":"TestB","Output":"=== RUN   TestB\n"}`,
				`{"Action":"pass","Package":"b","Test":"TestB","Elapsed":0.1}`,
				`{"Action":"pass","Package":"b","Elapsed":0.25}`,
				`{"Action":"pass","Package":"a","Elapsed":12}`,
			},
			want: []string{"ok  \tb\t0.250s", "ok  \ta\t12.000s"},
		},
		{
			name: "a failed package prints its output, then FAIL",
			in: []string{
				`{"Action":"start","Package":"c"}`,
				`{"Action":"output","Package":"c","Test":"TestC","Output":"    c_test.go:9: got 1, want 2\n"}`,
				`{"Action":"fail","Package":"c","Test":"TestC","Elapsed":0}`,
				`{"Action":"output","Package":"c","Output":"FAIL\n"}`,
				`{"Action":"fail","Package":"c","Elapsed":0.5}`,
			},
			want: []string{"    c_test.go:9: got 1, want 2\nFAIL", "FAIL\tc\t0.500s"},
		},
		{
			name: "no test files, and a build error before any JSON",
			in:   []string{`# example.com/d`, `d.go:3:1: syntax error`, `{"Action":"skip","Package":"e"}`},
			want: []string{"# example.com/d", "d.go:3:1: syntax error", "?   \te\t[no test files]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder // the heartbeat does not write within the hour
			if err := run(strings.NewReader(strings.Join(tc.in, "\n")+"\n"), &out, time.Hour); err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			want := strings.Split(strings.Join(tc.want, "\n"), "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunNeverSilent: while a package runs and nothing finishes, a line
// names it within the quiet period.
func TestRunNeverSilent(t *testing.T) {
	r, w := io.Pipe()
	out := make(lines, 10)
	done := make(chan error, 1)
	go func() { done <- run(r, out, 40*time.Millisecond) }()
	if _, err := w.Write([]byte(`{"Action":"start","Package":"slow"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-out:
		if !strings.HasPrefix(line, "still running: slow (") {
			t.Errorf("progress line %q, want one naming the running package", line)
		}
	case <-time.After(5 * time.Second):
		t.Error("no progress line while a package ran")
	}
	_ = w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
