package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// Set by scripts/build.sh (-ldflags "-X main.version=... -X main.commit=..."),
// because Go records no VCS information with -buildvcs=false (the team's
// GOFLAGS, the Docker build) nor under go run.
var (
	version    = ""
	commit     = ""
	commitTime = ""
	modified   = ""
)

// stamp is what -ldflags -X wrote into the binary.
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
		goVersion = bi.GoVersion
		if v == "" {
			v = bi.Main.Version
		}
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
