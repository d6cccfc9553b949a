//go:build unix

package bqemulator

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Options configures a started emulator.
type Options struct {
	Project string   // the only project it serves
	Env     []string // added to its environment, e.g. STORAGE_EMULATOR_HOST=http://host:port
}

// Emulator is a running emulator process, holding everything in memory.
type Emulator struct {
	URL string // http://127.0.0.1:PORT; a client's endpoint is URL + "/bigquery/v2/"

	cmd  *exec.Cmd
	out  *tail
	tmp  string // its TMPDIR: the SQLite files it spills, which a killed process leaves behind
	done chan struct{}
	err  error // the process's exit, once done is closed
}

// readyWithin bounds a start (the emulator answers in about 0.3 s).
const readyWithin = 20 * time.Second

// Start runs bin on two free loopback ports and waits until it answers.
func Start(ctx context.Context, bin string, opt Options) (*Emulator, error) {
	var err error
	for range 3 { // a free port can be taken between choosing and binding it
		var e *Emulator
		if e, err = start(ctx, bin, opt); err == nil {
			return e, nil
		}
	}
	return nil, err
}

func start(ctx context.Context, bin string, opt Options) (*Emulator, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "alpipe-bqemulator-")
	if err != nil {
		return nil, err
	}
	e := &Emulator{URL: "http://127.0.0.1:" + ports[0], out: &tail{max: 8 << 10}, done: make(chan struct{}), tmp: tmp}
	e.cmd = exec.Command(bin, "--project="+opt.Project, "--host=127.0.0.1",
		"--port="+ports[0], "--grpc-port="+ports[1], "--log-level=warn")
	e.cmd.Env = slices.Concat(e.cmd.Environ(), opt.Env, []string{"TMPDIR=" + tmp})
	e.cmd.Stdout, e.cmd.Stderr = e.out, e.out
	e.cmd.SysProcAttr = sysProcAttr()
	if err := e.cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { e.err = e.cmd.Wait(); close(e.done) }()
	if err := e.waitReady(ctx, opt.Project); err != nil {
		e.Stop()
		return nil, fmt.Errorf("start %s: %w; its output: %s", bin, err, e.out)
	}
	return e, nil
}

func (e *Emulator) waitReady(ctx context.Context, project string) error {
	ctx, cancel := context.WithTimeout(ctx, readyWithin)
	defer cancel()
	url := e.URL + "/bigquery/v2/projects/" + project + "/datasets"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-e.done:
			return fmt.Errorf("it exited: %v", e.err)
		case <-ctx.Done():
			return fmt.Errorf("no answer from %s: %w", url, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills the emulator's process group, waits for it and removes its
// temporary files.
func (e *Emulator) Stop() {
	select {
	case <-e.done:
	default:
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.done
	}
	_ = os.RemoveAll(e.tmp)
}

func freePorts(n int) ([]string, error) {
	var ports []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}

type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.b))
}
