package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/alpinashop/alpipe/internal/dashboard"
	"github.com/alpinashop/alpipe/test/tfconfig"
)

// startTimeout bounds a process's start, which takes well under a second.
const startTimeout = 30 * time.Second

// Process is one Cloud Run service: the production binary with the
// service's environment.
type Process struct {
	Service tfconfig.Service
	bin     string
	extra   map[string]string  // what Cloud Run and the emulators add
	echo    io.Writer          // also receives the output, when set
	monitor *dashboard.Monitor // also reads each line, when set

	mu   sync.Mutex
	cmd  *exec.Cmd
	port int
	out  *syncBuffer
	done chan struct{}
	err  error // how the last run ended
}

// Env is the process's whole environment, sorted: Terraform's plus extras.
func (p *Process) Env() []string {
	all := maps.Clone(p.Service.Env)
	maps.Copy(all, p.extra)
	p.mu.Lock()
	if p.port != 0 {
		all["PORT"] = strconv.Itoa(p.port)
	}
	p.mu.Unlock()
	var out []string
	for k, v := range all {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Start runs the binary on a free port and waits until it listens. A
// process that exits first (a refused configuration) is an error carrying
// its output, which names the problem.
func (p *Process) Start(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return fmt.Errorf("%s is already running", p.Service.Name)
	}
	p.port = port
	p.out = &syncBuffer{}
	p.mu.Unlock()

	cmd := exec.Command(p.bin)
	cmd.Env = p.Env()
	ws := []io.Writer{p.out}
	if p.echo != nil {
		ws = append(ws, prefixed(p.echo, p.Service.Name))
	}
	if m := p.monitor; m != nil {
		ws = append(ws, &lineWriter{line: func(l []byte) []byte { m.ObserveLine(l); return nil }})
	}
	w := io.MultiWriter(ws...)
	cmd.Stdout, cmd.Stderr = w, w
	// Its own process group, so that a kill reaches nothing else.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.Service.Name, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		if p.cmd == cmd {
			p.cmd = nil
		}
		p.mu.Unlock()
		close(done)
	}()

	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for {
		select {
		case <-done:
			return fmt.Errorf("%s (FUNCTION_TARGET=%s) exited at start: %v; its output:\n%s", p.Service.Name, p.Service.Function, p.exitErr(), p.Output())
		case <-deadline.C:
			_ = p.Kill()
			return fmt.Errorf("%s (FUNCTION_TARGET=%s) did not listen on %s within %s; its output:\n%s", p.Service.Name, p.Service.Function, addr, startTimeout, p.Output())
		case <-ctx.Done():
			_ = p.Kill()
			return ctx.Err()
		case <-tick.C:
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				return nil
			}
		}
	}
}

func (p *Process) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// URL is where the process listens ("" when it is not running).
func (p *Process) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(p.port)
}

func (p *Process) Running() bool { return p.URL() != "" }

// Output is everything the process wrote in its last run.
func (p *Process) Output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out == nil {
		return ""
	}
	return p.out.String()
}

// Kill sends SIGKILL, as a crashed or evicted instance dies, and waits.
func (p *Process) Kill() error { return p.signal(syscall.SIGKILL) }

// Stop sends SIGTERM, as Cloud Run does when it scales an instance down,
// and waits.
func (p *Process) Stop() error { return p.signal(syscall.SIGTERM) }

func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s: %w", p.Service.Name, err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("%s did not stop on %s within 10s", p.Service.Name, sig)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func prefixed(w io.Writer, name string) io.Writer {
	return &lineWriter{w: w, line: func(l []byte) []byte { return append([]byte(name+" | "), l...) }}
}

// lineWriter writes to w what line makes of each whole line (with its
// newline) written to it.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	line func([]byte) []byte
	rest []byte
}

func (lw *lineWriter) Write(b []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.rest = append(lw.rest, b...)
	for {
		i := bytes.IndexByte(lw.rest, '\n')
		if i < 0 {
			return len(b), nil
		}
		out := lw.line(lw.rest[:i+1])
		lw.rest = lw.rest[i+1:]
		if len(out) == 0 {
			continue
		}
		if _, err := lw.w.Write(out); err != nil {
			return len(b), err
		}
	}
}
