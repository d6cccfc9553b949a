// Command testprogress turns `go test -json` on its standard input into the
// lines `go test` prints, one per package as each finishes rather than in
// the order the packages were listed, so a long package does not hold back
// the others' results. While packages run and none has finished for a
// minute it says which are still running and for how long: a test run on a
// 2-core machine never goes silent. A failed package's output is printed
// whole, after its FAIL line. The exit status is go test's, through the
// shell's pipefail; this command fails only when its input is not test2json.
//
//	go test -json ./... | go run ./tools/testprogress
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is the part of test2json's TestEvent this command reads.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	if err := run(os.Stdin, os.Stdout, time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
}

type progress struct {
	mu      sync.Mutex
	out     io.Writer
	started map[string]time.Time // packages running
	output  map[string]*strings.Builder
	last    time.Time // of the last line printed
}

func run(in io.Reader, out io.Writer, quiet time.Duration) error {
	p := &progress{out: out, started: map[string]time.Time{}, output: map[string]*strings.Builder{}, last: time.Now()}
	done := make(chan struct{})
	defer close(done)
	go p.heartbeat(done, quiet)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// Build errors and the like come before any JSON: pass them on.
			p.mu.Lock()
			p.lineLocked(sc.Text())
			p.mu.Unlock()
			continue
		}
		p.handle(e)
	}
	return sc.Err()
}

func (p *progress) handle(e event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Package == "" {
		return
	}
	if _, ok := p.started[e.Package]; !ok && e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
		p.started[e.Package] = time.Now()
	}
	if e.Action == "output" {
		if p.output[e.Package] == nil {
			p.output[e.Package] = &strings.Builder{}
		}
		p.output[e.Package].WriteString(e.Output)
		return
	}
	if e.Test != "" {
		return
	}
	switch e.Action {
	case "pass":
		p.lineLocked(fmt.Sprintf("ok  \t%s\t%.3fs", e.Package, e.Elapsed))
	case "skip":
		p.lineLocked(fmt.Sprintf("?   \t%s\t[no test files]", e.Package))
	case "fail":
		if b := p.output[e.Package]; b != nil {
			p.lineLocked(strings.TrimRight(b.String(), "\n"))
		}
		p.lineLocked(fmt.Sprintf("FAIL\t%s\t%.3fs", e.Package, e.Elapsed))
	default:
		return
	}
	delete(p.started, e.Package)
	delete(p.output, e.Package)
}

func (p *progress) heartbeat(done <-chan struct{}, quiet time.Duration) {
	t := time.NewTicker(quiet / 4)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			p.mu.Lock()
			if len(p.started) > 0 && now.Sub(p.last) >= quiet {
				p.lineLocked("still running: " + p.runningLocked(now))
			}
			p.mu.Unlock()
		}
	}
}

// runningLocked lists the running packages, longest first.
func (p *progress) runningLocked(now time.Time) string {
	names := slices.Collect(maps.Keys(p.started))
	slices.SortFunc(names, func(a, b string) int { return p.started[a].Compare(p.started[b]) })
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s (%ds)", name, int(now.Sub(p.started[name]).Seconds()))
	}
	return strings.Join(parts, ", ")
}

func (p *progress) lineLocked(s string) {
	fmt.Fprintln(p.out, s)
	p.last = time.Now()
}
