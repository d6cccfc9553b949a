package main

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVersionString(t *testing.T) {
	const rev = "fb3052c7d8829aaf120db99e05e049c14f88e1f1"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{
			{Key: "-buildmode", Value: "exe"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-03-14T17:00:00Z"},
			{Key: "vcs.modified", Value: modified},
		}
	}
	// What go build records: with VCS stamping, a pseudo-version and the
	// vcs.* settings; with -buildvcs=false (GOFLAGS on the team's machines,
	// the Docker build) or go run, "(devel)" and none.
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/alpinashop/alpipe", Version: "v0.0.0-20260314170000-fb3052c7d882+dirty"}, Settings: vcs("true")}
	unstamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/alpinashop/alpipe", Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}}}
	// What scripts/build.sh passes with -ldflags -X.
	script := stamp{version: "v0.0.0-20260314170000-fb3052c7d882", commit: rev, commitTime: "2026-03-14T17:00:00Z", modified: "false"}

	tests := []struct {
		name  string
		bi    *debug.BuildInfo
		stamp stamp
		want  string
	}{
		{
			name: "go build with VCS stamping, no ldflags",
			bi:   stamped,
			want: "alpipe v0.0.0-20260314170000-fb3052c7d882+dirty commit fb3052c7d882+modified (2026-03-14T17:00:00Z) go1.26.8",
		},
		{
			name:  "-buildvcs=false with the build script's ldflags",
			bi:    unstamped,
			stamp: script,
			want:  "alpipe v0.0.0-20260314170000-fb3052c7d882 commit fb3052c7d882 (2026-03-14T17:00:00Z) go1.26.8",
		},
		{
			name:  "-buildvcs=false with ldflags from a modified tree",
			bi:    unstamped,
			stamp: stamp{version: script.version + "+dirty", commit: rev, commitTime: script.commitTime, modified: "true"},
			want:  "alpipe v0.0.0-20260314170000-fb3052c7d882+dirty commit fb3052c7d882+modified (2026-03-14T17:00:00Z) go1.26.8",
		},
		{
			name:  "ldflags commit only: the version is still unknown",
			bi:    unstamped,
			stamp: stamp{commit: rev},
			want:  "alpipe devel commit fb3052c7d882 go1.26.8",
		},
		{
			name:  "both: the release version from ldflags, the commit Go saw",
			bi:    stamped,
			stamp: stamp{version: "v1.4.0", commit: "0000000000000000000000000000000000000000"},
			want:  "alpipe v1.4.0 commit fb3052c7d882+modified (2026-03-14T17:00:00Z) go1.26.8",
		},
		{
			name: "go run or -buildvcs=false without ldflags says why there is no commit",
			bi:   unstamped,
			want: "alpipe devel (no commit recorded: built by go run or with -buildvcs=false; scripts/build.sh stamps it) go1.26.8",
		},
		{
			name: "go install of a tagged module: no VCS settings, the version is the tag",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/alpinashop/alpipe", Version: "v1.4.0"}},
			want: "alpipe v1.4.0 go1.26.8",
		},
		{
			name:  "no build info at all: the stamp alone",
			stamp: script,
			want:  "alpipe v0.0.0-20260314170000-fb3052c7d882 commit fb3052c7d882 (2026-03-14T17:00:00Z)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, versionString(tt.bi, tt.stamp)); diff != "" {
				t.Errorf("version line (-want +got):\n%s", diff)
			}
		})
	}
}
