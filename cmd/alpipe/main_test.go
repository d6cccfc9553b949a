package main

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/alpinashop/alpipe/internal/client"
)

const erpFile = "../../testdata/exportaciones/2026/03/14/pedidos-erp.csv"

// TestParseAcceptsFlagsAfterArguments pins the parser's one departure from
// package flag: a flag may follow or sit between the positionals.
func TestParseAcceptsFlagsAfterArguments(t *testing.T) {
	type parsed struct {
		Pos    []string
		Object string
	}
	tests := []struct {
		name string
		args []string
		want parsed
	}{
		{name: "flags first", args: []string{"--object", "x/y.csv", "file.csv"},
			want: parsed{Pos: []string{"file.csv"}, Object: "x/y.csv"}},
		{name: "flags after the file", args: []string{"file.csv", "--object", "x/y.csv"},
			want: parsed{Pos: []string{"file.csv"}, Object: "x/y.csv"}},
		{name: "several positionals around a flag", args: []string{"SELECT", "--object=o", "1"},
			want: parsed{Pos: []string{"SELECT", "1"}, Object: "o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCmdline(command{name: "drop", args: "ARG..."}, tt.args, &bytes.Buffer{})
			obj := c.String("object", "", "")
			if err := c.parse(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, parsed{Pos: c.pos, Object: *obj}); diff != "" {
				t.Errorf("positionals and --object (-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorsAreOneLineThatSaysWhatToDo covers the refusals that need no
// server. No server answers at --server, so a refusal that came only after
// a request would fail as unreachable instead: a name that Cloud Storage or
// the local folder layout refuses is refused first, with the rule. The
// unreachable cases are every client command: each says in one short line
// that no server answers, within seconds (backfill used to print nothing
// for ten minutes; drop printed a 300-character storage URL).
func TestErrorsAreOneLineThatSaysWhatToDo(t *testing.T) {
	const url = "http://127.0.0.1:1"
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		want        []string
		unreachable bool
	}{
		{name: "unknown command suggests", args: []string{"qurey"}, want: []string{`unknown command "qurey": did you mean "query"?`}},
		{name: "unknown flag suggests", args: []string{"drop", "--objct", "f.csv"}, want: []string{"drop: unknown flag --objct: did you mean --object?", "alpipe drop --help"}},
		{name: "unknown flag without a near one", args: []string{"drop", "--zzzzzz", "f.csv"}, want: []string{"drop: unknown flag --zzzzzz (alpipe drop --help lists the flags)"}},
		{name: "flag without value", args: []string{"query", "--max-rows"}, want: []string{"query: --max-rows needs a value"}},
		{name: "bad duration says the form", args: []string{"status", "--since", "1x"}, want: []string{`status: invalid value "1x" for --since: want a duration such as 90m or 24h`}},
		{name: "status --state of no ledger state", args: []string{"status", "--state", "LOST"}, want: []string{"want one of IN_PROGRESS, DONE, REJECTED, SKIPPED, DUPLICATE, FAILED"}},
		{name: "drop without a file", args: []string{"drop"}, want: []string{"drop: want exactly one FILE"}},
		{name: "drop of a missing file", args: []string{"drop", "nope.csv", "--object", "exportaciones/2026/03/14/nope.csv"}, want: []string{"drop: nope.csv: no such file"}},
		{name: "bad drop format", args: []string{"drop", erpFile, "--format", "xml"}, want: []string{`drop: --format "xml": want text or json`}},
		{name: "drop to an object no contract owns", args: []string{"drop", erpFile, "--object", "otra/carpeta/p.csv"},
			want: []string{`object "otra/carpeta/p.csv" matches no contract, so it would be skipped`, "lineas_pedido", "opiniones", "alpipe contracts"}},
		{name: "query without SQL", args: []string{"query"}, want: []string{"query: want SQL"}},
		{name: "a command that takes no arguments", args: []string{"aggregations", "ventas_hora_pais"}, want: []string{"aggregations: takes no arguments"}},
		{name: "backfill of a local folder", args: []string{"backfill", "./testdata/exportaciones/"}, want: []string{"is a local path", "drop --upload-only"}},
		{name: "tick with a clock time", args: []string{"tick", "--now", "18:30"}, want: []string{`tick: --now "18:30": want an RFC 3339 time`, "2026-03-14T18:30:00Z"}},
		{name: "serve --start without --virtual-clock", args: []string{"serve", "--start", "2026-03-14T17:00:00Z"}, want: []string{"--start sets a virtual clock's start; add --virtual-clock"}},
		{name: "serve with a bad log format", args: []string{"serve", "--log-format", "xml"}, want: []string{`--log-format "xml": want text or json`}},
		{name: "publish of a CSV", args: []string{"publish", erpFile}, want: []string{"is not JSONL", "alpipe drop"}},
		{name: "status --cloud without the cloud environment", args: []string{"status", "--cloud"},
			env:  map[string]string{"STATE_STORE": "", "WAREHOUSE": "", "GOOGLE_CLOUD_PROJECT": ""},
			want: []string{"status --cloud works on the deployed backends: set STATE_STORE=firestore, WAREHOUSE=bigquery, GOOGLE_CLOUD_PROJECT"}},
		{name: "validate to an object no contract owns", args: []string{"validate", erpFile, "--object", "x.csv"}, want: []string{"matches no contract"}},
		{name: "drop with a newline", args: []string{"drop", erpFile, "--object", "exportaciones/2026/03/14/a\nb.csv"}, want: []string{"drop: --object: object name"}},
		{name: "drop --upload-only with a newline", args: []string{"drop", erpFile, "--upload-only", "--object", "exportaciones/2026/03/14/a\nb.csv"}, want: []string{"U+000A"}},
		{name: "drop out of the bucket", args: []string{"drop", erpFile, "--object", "exportaciones/../../alpinashop-cuarentena/x.csv"}, want: []string{"empty, . or .. segment"}},
		{name: "validate with a carriage return", args: []string{"validate", erpFile, "--object", "exportaciones/2026/03/14/a\r.csv"}, want: []string{"U+000D"}},
		{name: "quarantine get of another bucket by path", args: []string{"quarantine", "get", "../alpinashop-catalogo/exportaciones/x.csv"}, want: []string{"empty, . or .. segment"}},
		{name: "quarantine get of another bucket by URL", args: []string{"quarantine", "get", "gs://alpinashop-catalogo/exportaciones/x.csv"}, want: []string{"quarantine get reads only gs://alpinashop-cuarentena"}},
		{name: "quarantine get leaving by URL", args: []string{"quarantine", "get", "gs://alpinashop-cuarentena/../x"}, want: []string{".. segment"}},
		{name: "quarantine ls with a newline", args: []string{"quarantine", "ls", "cuarentena/\n"}, want: []string{"U+000A"}},
		{name: "no server: drop", unreachable: true,
			args: []string{"drop", erpFile, "--object", "exportaciones/2026/03/14/pedidos-erp.csv"}},
		{name: "no server: drop --upload-only", unreachable: true,
			args: []string{"drop", erpFile, "--object", "exportaciones/2026/03/14/pedidos-erp.csv",
				"--upload-only"}},
		{name: "no server: backfill", unreachable: true, args: []string{"backfill", "exportaciones/"}},
		{name: "no server: query", unreachable: true, args: []string{"query", "SELECT 1"}},
		{name: "no server: publish", unreachable: true,
			args: []string{"publish", "../../testdata/pedidos/historia.jsonl"}},
		{name: "no server: tick", unreachable: true, args: []string{"tick"}},
		{name: "no server: tick --now", unreachable: true,
			args: []string{"tick", "--now", "2026-03-14T18:30:00Z"}},
		{name: "no server: status", unreachable: true, args: []string{"status"}},
		{name: "no server: status OBJECT", unreachable: true,
			args: []string{"status", "exportaciones/2026/03/14/pedidos-erp.csv"}},
		{name: "no server: quarantine ls", unreachable: true, args: []string{"quarantine", "ls"}},
		{name: "no server: quarantine get", unreachable: true,
			args: []string{"quarantine", "get", "x.csv"}},
		{name: "no server: requeue", unreachable: true, args: []string{"requeue", "cuarentena/x.csv"}},
		{name: "no server: replay", unreachable: true, args: []string{"replay", "--from-table"}},
		{name: "no server: reconcile", unreachable: true,
			args: []string{"reconcile", "--date", "2026-03-14"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PUBSUB_EMULATOR_HOST", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := tt.args
			if i := slices.IndexFunc(commands(), func(c command) bool { return c.name == args[0] }); i >= 0 && commands()[i].server {
				args = slices.Concat(args[:1], []string{"--server", url}, args[1:])
			}
			want := tt.want
			if tt.unreachable {
				want = []string{"is `alpipe serve` running at " + url + "?"}
			}
			start := time.Now()
			var out bytes.Buffer
			err := dispatch(context.Background(), args, &out)
			if err == nil || !tt.unreachable && errors.Is(err, client.ErrUnreachable) {
				t.Fatalf("error %v, want a refusal before any request; output:\n%s", err, out.String())
			}
			msg := oneLine(err)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("error = %q, want it to contain %q", msg, w)
				}
			}
			if strings.ContainsAny(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err.Error())
			}
			if strings.Contains(msg, "links no embedded engine") || strings.Contains(msg, "cannot parse") {
				t.Errorf("error leaks internals: %q", msg)
			}
			if tt.unreachable && len(msg) > 200 {
				t.Errorf("error is %d characters: %q", len(msg), msg)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s to fail", d)
			}
		})
	}
}

// TestHelpOnEveryCommand: help is asked for, not an error: stdout, exit 0,
// with a usage line, the arguments and an example. The usage line names
// every flag the help lists, so help cannot drift from the flags it
// documents; drop and validate say what their exit statuses mean.
func TestHelpOnEveryCommand(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  (-[a-z]|--[a-z-]+)`)
	exits := map[string]string{"drop": "exit status:\n  0 loaded in full", "validate": "exit status:\n  0 every row valid"}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var out bytes.Buffer
				if err := dispatch(context.Background(), args, &out); err != nil {
					t.Fatalf("error %v; help must exit 0", err)
				}
				help := out.String()
				for _, want := range []string{"usage: alpipe " + c.name, "arguments:\n  ", "examples:\n  alpipe ", exits[c.name]} {
					if !strings.Contains(help, want) {
						t.Errorf("help lacks %q:\n%s", want, help)
					}
				}
				usage, _, _ := strings.Cut(help, "\n\n")
				_, flags, _ := strings.Cut(help, "\nflags:\n")
				flags, _, _ = strings.Cut(flags, "\n\n")
				for _, m := range flagLine.FindAllStringSubmatch(flags, -1) {
					if !regexp.MustCompile(regexp.QuoteMeta(m[1]) + `[ \]=]`).MatchString(usage) {
						t.Errorf("usage line lacks %q:\n%s", m[1], help)
					}
				}
			})
		}
	}
	// alpipe's own usage and its version: stdout, exit 0.
	const usage, version = `(?s)^usage: alpipe COMMAND.*\n  validate `, `^alpipe [^\n]+\n$`
	for args, want := range map[string]string{"help": usage, "-h": usage, "--help": usage,
		"version": version, "--version": version} {
		var out bytes.Buffer
		err := dispatch(context.Background(), []string{args}, &out)
		if err != nil || !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("%s: error %v, stdout %q; want exit 0 and stdout matching %s",
				args, err, out.String(), want)
		}
	}
}

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
		{name: "go build with VCS stamping, no ldflags", bi: stamped,
			want: "alpipe v0.0.0-20260314170000-fb3052c7d882+dirty commit fb3052c7d882+modified (2026-03-14T17:00:00Z) go1.26.8"},
		{name: "-buildvcs=false with the build script's ldflags", bi: unstamped, stamp: script,
			want: "alpipe v0.0.0-20260314170000-fb3052c7d882 commit fb3052c7d882 (2026-03-14T17:00:00Z) go1.26.8"},
		{name: "-buildvcs=false with ldflags from a modified tree", bi: unstamped, stamp: stamp{version: script.version + "+dirty", commit: rev, commitTime: script.commitTime, modified: "true"},
			want: "alpipe v0.0.0-20260314170000-fb3052c7d882+dirty commit fb3052c7d882+modified (2026-03-14T17:00:00Z) go1.26.8"},
		{name: "ldflags commit only: the version is still unknown", bi: unstamped, stamp: stamp{commit: rev},
			want: "alpipe devel commit fb3052c7d882 go1.26.8"},
		{name: "both: the release version from ldflags, the commit Go saw", bi: stamped, stamp: stamp{version: "v1.4.0", commit: "0000000000000000000000000000000000000000"},
			want: "alpipe v1.4.0 commit fb3052c7d882+modified (2026-03-14T17:00:00Z) go1.26.8"},
		{name: "go run or -buildvcs=false without ldflags says why there is no commit", bi: unstamped,
			want: "alpipe devel (no commit recorded: built by go run or with -buildvcs=false; scripts/build.sh stamps it) go1.26.8"},
		{name: "go install of a tagged module: no VCS settings, the version is the tag", bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/alpinashop/alpipe", Version: "v1.4.0"}},
			want: "alpipe v1.4.0 go1.26.8"},
		{name: "no build info at all: the stamp alone", stamp: script,
			want: "alpipe v0.0.0-20260314170000-fb3052c7d882 commit fb3052c7d882 (2026-03-14T17:00:00Z)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, versionString(tt.bi, tt.stamp)); diff != "" {
				t.Errorf("version line (-want +got):\n%s", diff)
			}
		})
	}
}
