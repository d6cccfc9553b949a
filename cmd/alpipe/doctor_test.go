package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeHost is a machine described by what is installed on it.
type fakeHost struct {
	paths     map[string]string // tool -> path
	outputs   map[string]string // tool -> version output
	files     map[string]bool   // existing paths (folders)
	lockPID   string
	clockMark string
	alivePID  int
	busyPort  bool
	serving   bool
}

type fakeInfo struct {
	fs.FileInfo
	dir bool
}

func (f fakeInfo) IsDir() bool { return f.dir }

func (h fakeHost) host() host {
	return host{
		lookPath: func(name string) (string, error) {
			if p, ok := h.paths[name]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		},
		output: func(_ context.Context, name string, _ ...string) (string, error) {
			return h.outputs[name], nil
		},
		stat: func(p string) (os.FileInfo, error) {
			if dir, ok := h.files[p]; ok {
				return fakeInfo{dir: dir}, nil
			}
			return nil, os.ErrNotExist
		},
		readFile: func(p string) ([]byte, error) {
			if strings.HasSuffix(p, "serve.lock") && h.lockPID != "" {
				return []byte(h.lockPID + "\n"), nil
			}
			if strings.HasSuffix(p, "/clock") && h.clockMark != "" {
				return []byte(h.clockMark + "\n"), nil
			}
			return nil, os.ErrNotExist
		},
		alive:   func(pid int) bool { return pid == h.alivePID },
		serving: func(context.Context, string) bool { return h.serving },
		bindable: func(string) error {
			if h.busyPort {
				return errors.New("address already in use")
			}
			return nil
		},
	}
}

func complete() fakeHost {
	return fakeHost{
		paths: map[string]string{"go": "/usr/bin/go", "gcc": "/usr/bin/gcc", "gcloud": "/nonexistent-sdk/bin/gcloud",
			"java": "/usr/bin/java", "chromium": "/usr/bin/chromium", "chromedriver": "/usr/bin/chromedriver"},
		outputs: map[string]string{"go": "go version go1.26.8 linux/amd64\n", "java": `openjdk version "17.0.15" 2025-04-15` + "\n"},
		files: map[string]bool{"/nonexistent-sdk/platform/cloud-firestore-emulator": true,
			"/nonexistent-sdk/platform/pubsub-emulator": true},
	}
}

// missing lists the checks that failed, with their fixes.
func missing(fs []finding) []string {
	var out []string
	for _, f := range fs {
		if !f.OK {
			out = append(out, f.Check+": "+f.Detail+" | fix: "+f.Fix)
		}
	}
	return out
}

func TestDoctorFindings(t *testing.T) {
	tests := []struct {
		name   string
		change func(*fakeHost)
		want   []string
	}{
		{name: "everything present", change: func(*fakeHost) {}},
		{
			name:   "no gcc",
			change: func(h *fakeHost) { delete(h.paths, "gcc") },
			want:   []string{"gcc: gcc is not on PATH: `go build ./cmd/alpipe` fails compiling DuckDB | fix: apt-get install gcc (macOS: xcode-select --install)"},
		},
		{
			name:   "old Go",
			change: func(h *fakeHost) { h.outputs["go"] = "go version go1.22.1 linux/amd64" },
			want:   []string{"go: go1.22 is too old: go.mod needs go1.26 | fix: install Go 1.26 or newer (https://go.dev/dl), then open a new shell"},
		},
		{
			name: "no gcloud: both emulators missing too",
			change: func(h *fakeHost) {
				delete(h.paths, "gcloud")
			},
			want: []string{
				"gcloud: gcloud is not on PATH: scripts/test.sh cannot start the emulators (scripts/test.sh -short needs none) | fix: apt-get install google-cloud-cli (Google's Debian repository)",
				"firestore emulator: gcloud is missing | fix: apt-get install google-cloud-cli-firestore-emulator (or: gcloud components install cloud-firestore-emulator)",
				"pubsub emulator: gcloud is missing | fix: apt-get install google-cloud-cli-pubsub-emulator (or: gcloud components install pubsub-emulator)",
			},
		},
		{
			name:   "pubsub emulator not installed",
			change: func(h *fakeHost) { delete(h.files, "/nonexistent-sdk/platform/pubsub-emulator") },
			want:   []string{"pubsub emulator: not installed in /nonexistent-sdk | fix: apt-get install google-cloud-cli-pubsub-emulator (or: gcloud components install pubsub-emulator)"},
		},
		{
			name:   "Java 11",
			change: func(h *fakeHost) { h.outputs["java"] = `openjdk version "11.0.2" 2019-01-15` },
			want:   []string{"java: Java 11 is too old | fix: apt-get install openjdk-17-jre-headless"},
		},
		{
			name:   "no chromium: optional, still listed",
			change: func(h *fakeHost) { delete(h.paths, "chromium") },
			want:   []string{"chromium: chromium is not on PATH | fix: scripts/chromium.sh (apt-get install chromium chromium-driver)"},
		},
		{
			name:   "port taken by something else",
			change: func(h *fakeHost) { h.busyPort = true },
			want:   []string{"port 127.0.0.1:8080: taken by another program: address already in use | fix: stop that program, or run alpipe serve --addr 127.0.0.1:0 (a free port) and pass its address as --server"},
		},
		{
			name:   "port taken by alpipe serve is fine",
			change: func(h *fakeHost) { h.busyPort, h.serving = true, true },
		},
		{
			name:   "data folder is a file",
			change: func(h *fakeHost) { h.files[".local"] = false },
			want:   []string{"data folder .local: is a file, not a folder | fix: remove it, or pass --data with another folder"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := complete()
			tt.change(&h)
			got := missing(diagnose(context.Background(), h.host(), "127.0.0.1:8080", ".local"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("missing pieces (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDoctorNamesTheServeHoldingTheFolder(t *testing.T) {
	h := complete()
	h.files[".local"] = true
	h.lockPID, h.alivePID, h.clockMark = "4242", 4242, "wall"
	for _, f := range diagnose(context.Background(), h.host(), "127.0.0.1:8080", ".local") {
		if strings.HasPrefix(f.Check, "data folder") {
			if want := "present, written on the wall clock (serve with the other clock needs another --data); used by a running alpipe serve (PID 4242)"; f.Detail != want || !f.OK {
				t.Errorf("data folder finding = %+v, want OK with %q", f, want)
			}
			return
		}
	}
	t.Fatal("no data folder finding")
}

// TestDoctorOnThisMachine runs the real checks: on the team's machines
// everything required is present, so it exits 0 and prints one line a check.
func TestDoctorOnThisMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the machine (go, java -version)")
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := dispatch(ctx, []string{"doctor", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out)
	for _, check := range []string{"go", "gcc", "gcloud", "firestore emulator", "pubsub emulator", "java", "port 127.0.0.1:0", "data folder"} {
		if !strings.Contains(out.String(), "  "+check) {
			t.Errorf("doctor printed no %q line:\n%s", check, out.String())
		}
	}
	if err != nil {
		t.Errorf("doctor on a team machine: %v\n%s", err, out.String())
	}
}
