package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at release builds (-ldflags "-X main.version=v1.2.3");
// otherwise the module and VCS stamps Go records are printed.
var version = ""

func runVersion(_ context.Context, c *cmdline, stdout io.Writer) error {
	if err := c.parse(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine())
	return nil
}

func versionLine() string {
	v, rev, at, dirty, goVersion := version, "", "", false, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
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
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	line := "alpipe " + v
	if rev != "" {
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
	}
	if goVersion != "" {
		line += " " + goVersion
	}
	return line
}
