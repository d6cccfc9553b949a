// Command alpipe runs AlpinaShop's pipeline on a laptop: every function on
// one mux, a fake Cloud Storage, an embedded state store and DuckDB, all in
// one data folder. Errors are one line on stderr, as gcloud and bq print
// them, so that scripts can read them; a command line that is not one exits 2.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/alpinashop/alpipe/internal/config"
	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

func main() {
	reexecWithAllocatorSettings()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "alpipe: "+errorText(err))
		os.Exit(exitCode(err))
	}
}

func oneLine(err error) string { return render.OneLine(err.Error()) }

// detailError is an error with a block that only makes sense on lines of
// its own (DuckDB's SQL line with a caret under the fault), printed under
// the one-line reason.
type detailError struct {
	msg, detail string
	cause       error
}

func (e *detailError) Error() string  { return e.msg }
func (e *detailError) Detail() string { return e.detail }
func (e *detailError) Unwrap() error  { return e.cause }

// errorText is what main prints after "alpipe: ".
func errorText(err error) string {
	s := oneLine(err)
	var d interface{ Detail() string }
	if errors.As(err, &d) && strings.TrimSpace(d.Detail()) != "" {
		s += "\n" + strings.TrimRight(d.Detail(), "\n")
	}
	return s
}

// reexecWithAllocatorSettings restarts the process once with DuckDB's
// allocator told to return freed pages to the system. DuckDB reads the
// setting only at process start, and without it the resident size of a
// long-running serve grows with every load (measured: 200 MiB instead of
// 136 MiB peak for three 800,000-row loads).
func reexecWithAllocatorSettings() {
	if _, set := os.LookupEnv(duckdb.JemallocConf); set {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, append(os.Environ(), duckdb.JemallocConf+"="+duckdb.JemallocReturnFreed))
}

// cliEnv is read when a command parses its flags, so tests can set the
// environment per case. Every field is optional: it fails only on a
// malformed value.
func cliEnv() config.CLI {
	var c config.CLI
	if err := config.Load(context.Background(), &c, nil); err != nil {
		fmt.Fprintln(os.Stderr, "alpipe:", err)
		os.Exit(2)
	}
	return c
}

func report(w io.Writer, format string, v any, text func(io.Writer) error) error {
	if format == "json" {
		return render.JSON(w, v)
	}
	return text(w)
}

// Set by scripts/build.sh (-ldflags "-X main.version=... -X main.commit=..."),
// because Go records no VCS information with -buildvcs=false (the team's
// GOFLAGS, the Docker build) nor under go run.
var (
	version    = ""
	commit     = ""
	commitTime = ""
	modified   = ""
)

type stamp struct{ version, commit, commitTime, modified string }

func runVersion(_ context.Context, c *cmdline, stdout io.Writer) error {
	if err := c.parse(); err != nil {
		return err
	}
	bi, _ := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionString(bi, stamp{version, commit, commitTime, modified}))
	return nil
}

// versionString prefers what Go recorded at build time and fills what it
// lacks from the ldflags stamp; an explicit -X main.version (a release)
// wins over Go's pseudo-version.
func versionString(bi *debug.BuildInfo, s stamp) string {
	v, rev, at, dirty, goVersion := s.version, "", "", false, ""
	if bi != nil {
		goVersion, v = bi.GoVersion, cmp.Or(v, bi.Main.Version)
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		rev, at, dirty = s.commit, s.commitTime, s.modified == "true"
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	line := "alpipe " + v
	switch {
	case rev != "":
		if len(rev) > 12 {
			rev = rev[:12]
		}
		line += " commit " + rev
		if dirty {
			line += "+modified"
		}
		if at != "" {
			line += " (" + at + ")"
		}
	case v == "devel":
		line += " (no commit recorded: built by go run or with -buildvcs=false; scripts/build.sh stamps it)"
	}
	if goVersion != "" {
		line += " " + goVersion
	}
	return line
}
