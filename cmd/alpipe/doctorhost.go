package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/alpinashop/alpipe/internal/localapi"
)

// host is what doctor reads of the machine, injectable for tests.
type host struct {
	lookPath  func(string) (string, error)
	output    func(ctx context.Context, name string, args ...string) (string, error)
	stat      func(string) (os.FileInfo, error)
	readFile  func(string) ([]byte, error)
	alive     func(pid int) bool
	serving   func(ctx context.Context, addr string) bool // an alpipe server answers there
	bindable  func(addr string) error
	getenv    func(string) string
	getwd     func() (string, error)
	reachable func(ctx context.Context, url string) error // any HTTP status
}

func realHost() host {
	return host{
		lookPath: exec.LookPath,
		output: func(ctx context.Context, name string, args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, name, args...)
			// terraform version would otherwise ask HashiCorp for a newer release.
			cmd.Env = append(cmd.Environ(), "CHECKPOINT_DISABLE=1")
			out, err := cmd.CombinedOutput()
			return string(out), err
		},
		stat:     os.Stat,
		readFile: os.ReadFile,
		alive: func(pid int) bool {
			return pid > 0 && syscall.Kill(pid, 0) == nil
		},
		serving: func(ctx context.Context, addr string) bool {
			code, err := probe(ctx, http.MethodGet, "http://"+addr+localapi.HealthPath, time.Second)
			return err == nil && code == http.StatusOK
		},
		bindable: func(addr string) error {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			return l.Close()
		},
		getenv: os.Getenv,
		getwd:  os.Getwd,
		reachable: func(ctx context.Context, url string) error {
			_, err := probe(ctx, http.MethodHead, url, 5*time.Second)
			return err
		},
	}
}

func probe(ctx context.Context, method, url string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, resp.Body.Close()
}
