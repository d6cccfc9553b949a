package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"
)

// helpText is what `alpipe COMMAND --help` prints besides the flags: the
// usage line, the arguments and an example a user can paste.
type helpText struct {
	usage    string
	args     string
	examples []string
}

var helps = map[string]helpText{
	"serve": {
		usage:    "alpipe serve [--addr 127.0.0.1:8080] [--data .local] [--virtual-clock [--start RFC3339]] [--log-format text|json]",
		args:     "none. Runs until Ctrl-C; client commands reach it at --addr (their --server, or ALPIPE_SERVER).",
		examples: []string{"alpipe serve", "alpipe serve --virtual-clock --start 2026-03-14T17:00:00Z --data .local-orders --addr 127.0.0.1:8081"},
	},
	"drop": {
		usage:    "alpipe drop FILE [--object PATH] [--upload-only] [--format text|json] [--server URL]",
		args:     "FILE  a local CSV export. It lands as --object (default exportaciones/<today>/<file name>), which must match a contract (alpipe contracts).",
		examples: []string{"alpipe drop testdata/exportaciones/2026/03/14/pedidos-erp.csv --object exportaciones/2026/03/14/pedidos-erp.csv"},
	},
	"validate": {
		usage:    "alpipe validate FILE [--object PATH] [--show 10] [--format text|json]",
		args:     "FILE  a local CSV export, checked against the contract its object name matches (--object, default as for drop). Nothing is loaded; no server is needed.",
		examples: []string{"alpipe validate testdata/exportaciones/2026/03/14/pedidos-erp.csv --object exportaciones/2026/03/14/pedidos-erp.csv"},
	},
	"aggregations": {
		usage:    "alpipe aggregations [--format text|json]",
		args:     "none. Lists the declared event-time aggregations (internal/aggregation/declarations): window, key, measures, delays, accumulation, panes table and view. No server is needed.",
		examples: []string{"alpipe aggregations", "alpipe aggregations --format json"},
	},
	"contracts": {
		usage:    "alpipe contracts [--format text|json]",
		args:     "none. Lists the embedded feeds: object pattern, table, columns, types and rules. No server is needed.",
		examples: []string{"alpipe contracts"},
	},
	"query": {
		usage:    "alpipe query SQL [--max-rows 100] [--format table|csv|json|jsonl] [--output FILE] [--server URL]",
		args:     "SQL  one read-only statement on the local warehouse (quote it). At most --max-rows rows are printed (0: all). --output FILE streams every row (csv, or jsonl for .jsonl) to FILE, written only when the answer is whole.",
		examples: []string{`alpipe query "SELECT * FROM ventas_diarias_sku ORDER BY fecha, sku"`, `alpipe query "SELECT pais, sum(importe) FROM lineas_pedido GROUP BY 1" --format json`, `alpipe query "SELECT * FROM lineas_pedido" --output lineas.csv`},
	},
	"tables": {
		usage:    "alpipe tables [--format text|json]",
		args:     "none. Lists the tables and views of alpinashop_analitica with their layout, from the embedded schemas Terraform also uses. No server is needed.",
		examples: []string{"alpipe tables"},
	},
	"schema": {
		usage:    "alpipe schema TABLE [--format text|json]",
		args:     "TABLE  a table or view (alpipe tables lists them). Prints its columns, types, modes and descriptions. No server is needed.",
		examples: []string{"alpipe schema lineas_pedido", "alpipe schema ventas_hora_pais --format json"},
	},
	"publish": {
		usage:    "alpipe publish FILE.jsonl [--format text|json] [--server URL] [--project ID]",
		args:     "FILE.jsonl  orders, one JSON object per line with its momento_evento (see testdata/pedidos/historia.jsonl). With PUBSUB_EMULATOR_HOST set they go to topic pedidos-nuevos on the emulator.",
		examples: []string{"alpipe publish testdata/pedidos/historia.jsonl"},
	},
	"tick": {
		usage:    "alpipe tick [--now RFC3339] [--format text|json] [--server URL]",
		args:     "none. --now first moves a --virtual-clock server's processing time forward (never back).",
		examples: []string{"alpipe tick --now 2026-03-14T18:25:00Z"},
	},
	"status": {
		usage:    "alpipe status [OBJECT] [--since 24h] [--files 50] [--state FAILED] [--watch 10s] [--format text|json] [--server URL] [--cloud]",
		args:     "OBJECT  optional: a landing object name; prints that object's ledger history (every generation and attempt outcome).",
		examples: []string{"alpipe status", "alpipe status exportaciones/2026/03/14/pedidos-erp.csv", "alpipe status --state FAILED", "alpipe status --watch 10s", "alpipe status --since 72h --format json"},
	},
	"quarantine": {
		usage:    "alpipe quarantine ls [PREFIX] [--format text|json] [--server URL]\n       alpipe quarantine get OBJECT [-o FILE] [--server URL]",
		args:     "ls lists the quarantine bucket (optionally under PREFIX); get writes one quarantine file to -o (default: its base name in the current folder; - for stdout).",
		examples: []string{"alpipe quarantine ls", "alpipe quarantine get cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.g1773500000000000.csv -o -"},
	},
	"backfill": {
		usage:    "alpipe backfill PREFIX|gs://BUCKET/PREFIX [--concurrency 4] [--grace 30s] [--format text|json] [--server URL]",
		args:     "PREFIX  a prefix of the server's landing bucket (upload history first with drop --upload-only), or gs://BUCKET/PREFIX on Cloud Storage with the environment's backends.",
		examples: []string{"alpipe drop --upload-only testdata/exportaciones/2026/03/14/pedidos-erp.csv --object exportaciones/2026/03/14/pedidos-erp.csv", "alpipe backfill exportaciones/2026/03/"},
	},
	"requeue": {
		usage:    "alpipe requeue QUARANTINE_OBJECT [--file FIXED.csv] [--object PATH] [--declared-header] [--format text|json] [--server URL]",
		args:     "QUARANTINE_OBJECT  a name in the local quarantine bucket (alpipe quarantine ls), or gs://BUCKET/NAME.",
		examples: []string{"alpipe quarantine get OBJECT -o fixed.csv   # edit fixed.csv, then:", "alpipe requeue OBJECT --file fixed.csv"},
	},
	"replay": {
		usage:    "alpipe replay FILE.jsonl | --from-table [--dates A..B] [--format text|json] [--server URL]",
		args:     "FILE.jsonl  historical orders (as for publish), or --from-table to replay lineas_pedido.",
		examples: []string{"alpipe replay --from-table --dates 2026-03-01..2026-03-13"},
	},
	"reconcile": {
		usage:    "alpipe reconcile --date YYYY-MM-DD [--aggregation NAME] [--zone UTC] [--format text|json] [--server URL]",
		args:     "none. --date is required.",
		examples: []string{"alpipe reconcile --date 2026-03-14"},
	},
	"demo": {
		usage:    "alpipe demo [--testdata testdata] [-v]",
		args:     "none. Starts a private server on a free port and a temporary data folder, plays the demo stories and exits.",
		examples: []string{"alpipe demo"},
	},
	"ls": {
		usage:    "alpipe ls [PREFIX|gs://BUCKET/PREFIX] [--max 1000] [--format text|json] [--server URL]",
		args:     "PREFIX  optional: objects of the landing bucket under it; gs://BUCKET/PREFIX lists another local bucket (alpinashop-cuarentena, alpinashop-staging).",
		examples: []string{"alpipe ls exportaciones/2026/03/", "alpipe ls gs://alpinashop-cuarentena/ --format json"},
	},
	"doctor": {
		usage:    "alpipe doctor [--addr 127.0.0.1:8080] [--data .local] [--format text|json]",
		args:     "none. Checks Go, gcc, gcloud and its Firestore and Pub/Sub emulators, Java, Chromium and chromedriver, serve's port and data folder; prints the fix for each missing piece and exits 1 when a required one is missing. No server is needed.",
		examples: []string{"alpipe doctor", "alpipe doctor --addr 127.0.0.1:8081 --data .local-orders --format json"},
	},
	"version": {
		usage:    "alpipe version",
		args:     "none.",
		examples: []string{"alpipe version"},
	},
}

func summaryOf(name string) string {
	for _, c := range commands() {
		if c.name == name {
			return c.summary
		}
	}
	return ""
}

// writeHelp prints a command's help: usage, what it does, arguments,
// flags in --name form and examples.
func writeHelp(w io.Writer, fs *flag.FlagSet) {
	h := helps[fs.Name()]
	fmt.Fprintf(w, "usage: %s\n\n%s.\n\narguments:\n  %s\n", h.usage, summaryOf(fs.Name()), h.args)
	var flags strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		name, use := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		fmt.Fprintf(&flags, "  %s%s", dash, f.Name)
		if name != "" {
			fmt.Fprintf(&flags, " %s", name)
		}
		fmt.Fprintf(&flags, "\n      %s", use)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&flags, " (default %s)", f.DefValue)
		}
		flags.WriteString("\n")
	})
	if flags.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", flags.String())
	}
	fmt.Fprintln(w, "\nexamples:")
	for _, e := range h.examples {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// flagError rewrites the flag package's messages in the --name form the
// help shows, suggests the nearest flag for a typo and points at --help.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := suggest(name, names); s != "" {
			return fmt.Errorf("%s: unknown flag --%s: did you mean --%s? (alpipe %s --help lists the flags)", fs.Name(), name, s, fs.Name())
		}
		return fmt.Errorf("%s: unknown flag --%s (alpipe %s --help lists the flags)", fs.Name(), name, fs.Name())
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("%s: --%s needs a value (alpipe %s --help)", fs.Name(), name, fs.Name())
	}
	msg = strings.Replace(msg, "for flag -", "for --", 1)
	if i := strings.Index(msg, "for --"); i >= 0 {
		name, _, _ := strings.Cut(msg[i+len("for --"):], ":")
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case time.Duration:
					msg = strings.TrimSuffix(msg, ": parse error") + ": want a duration such as 90m or 24h"
				case int:
					msg = strings.TrimSuffix(msg, ": parse error") + ": want a whole number"
				}
			}
		}
	}
	return fmt.Errorf("%s: %s (alpipe %s --help)", fs.Name(), msg, fs.Name())
}

// suggest returns the candidate nearest to s when it is a plausible typo:
// a prefix, or within two edits.
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if len(s) >= 3 && strings.HasPrefix(c, s) {
			return c
		}
		if d := distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// version is set at release builds (-ldflags "-X main.version=v1.2.3");
// otherwise the module and VCS stamps Go records are printed.
var version = ""

func runVersion(_ context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("version: takes no arguments")
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
