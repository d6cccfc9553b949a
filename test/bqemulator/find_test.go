package bqemulator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	// root/repo is the repository; root/shared holds the team's binary.
	fake := func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		env     string // BIGQUERY_EMULATOR, relative to root; "" unset
		files   []string
		want    string // relative to root
		wantErr []string
		missing bool
	}{
		{name: "the variable first", env: "mine/emu", files: []string{"mine/emu", "shared/bigquery-emulator/bin/bigquery-emulator"}, want: "mine/emu"},
		{name: "a variable naming nothing fails", env: "mine/none", files: []string{"shared/bigquery-emulator/bin/bigquery-emulator"},
			wantErr: []string{"BIGQUERY_EMULATOR=", "mine/none"}},
		{name: "the shared binary", files: []string{"shared/bigquery-emulator/bin/bigquery-emulator", "repo/.cache/bin/bigquery-emulator"},
			want: "repo/../shared/bigquery-emulator/bin/bigquery-emulator"},
		{name: "an installed one", files: []string{"repo/.cache/bin/bigquery-emulator"}, want: "repo/.cache/bin/bigquery-emulator"},
		{name: "none names the three", missing: true,
			wantErr: []string{"set BIGQUERY_EMULATOR", SharedPath, "go install " + Module + "@" + Version, CacheDir, "not attempted"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				fake(t, filepath.Join(root, f))
			}
			env := ""
			if tc.env != "" {
				env = filepath.Join(root, tc.env)
			}
			t.Setenv(EnvVar, env)
			got, err := Find(context.Background(), filepath.Join(root, "repo"), false)
			for _, w := range tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Find = %s, error %v; want one containing %q", got, err, w)
				}
			}
			if errors.Is(err, ErrMissing) != tc.missing {
				t.Errorf("errors.Is(%v, ErrMissing) = %t, want %t", err, !tc.missing, tc.missing)
			}
			if want := filepath.Join(root, tc.want); tc.wantErr == nil && (err != nil || got != want) {
				t.Errorf("Find = %s, %v; want %s", got, err, want)
			}
		})
	}
}

// TestStartStop runs the emulator Find finds and stops it again.
func TestStartStop(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Find(context.Background(), root, false)
	if err != nil {
		t.Skipf("start and stop not checked: %v", err)
	}
	e, err := Start(context.Background(), bin, Options{Project: "p"})
	if err != nil {
		t.Fatal(err)
	}
	e.Stop()
	if err := e.waitReady(context.Background(), "p"); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("after Stop: %v, want the process gone", err)
	}
}
