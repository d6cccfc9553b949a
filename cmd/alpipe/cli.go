package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/alpinashop/alpipe/internal/client"
	"github.com/alpinashop/alpipe/internal/localapi"
)

// command is one alpipe command. Its help is generated: the usage line and
// the flags from the flag set run declares, so help cannot drift from them.
type command struct {
	name string
	// args are the positionals in the usage line, and parse holds the
	// command line to them: NAME exactly one, [NAME] at most one, NAME...
	// one or more, "" (or a required --flag) none; alternatives (" | ")
	// are the command's to check.
	args     string
	summary  string
	about    string
	exit     string // when more than done or not
	examples []string
	server   bool   // the command talks to serve: --server
	formats  string // --format's values, "text|json"; the first is the default
	run      func(ctx context.Context, c *cmdline, stdout io.Writer) error
}

type cmdline struct {
	*flag.FlagSet
	cmd    command
	args   []string
	stdout io.Writer
	short  map[string]string // long name -> its one-letter alias

	pos    []string
	format string
	server string        // as given
	srv    client.Server // as a URL
}

func newCmdline(cmd command, args []string, stdout io.Writer) *cmdline {
	c := &cmdline{FlagSet: flag.NewFlagSet(cmd.name, flag.ContinueOnError), cmd: cmd, args: args, stdout: stdout, short: map[string]string{}}
	if cmd.server {
		c.StringVar(&c.server, "server", cmp.Or(cliEnv().Server, localapi.DefaultURL), "the running \"alpipe serve\", as HOST:PORT or `URL`; ALPIPE_SERVER sets the default")
	}
	if cmd.formats != "" {
		c.StringVar(&c.format, "format", strings.Split(cmd.formats, "|")[0], "the output's form: `"+cmd.formats+"`")
	}
	return c
}

func (c *cmdline) outputFlag(usage string) *string {
	out := c.String("output", "", usage)
	c.Var(c.Lookup("output").Value, "o", "")
	c.short["output"] = "o"
	return out
}

func (c *cmdline) isSet(name string) bool {
	set := false
	c.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// usageError exits 2, as the flag package and gcloud do.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

func (c *cmdline) usagef(format string, a ...any) error {
	return usageError{fmt.Errorf(c.Name()+": "+format, a...)}
}

func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.As(err, new(usageError)):
		return 2
	}
	return 1
}

// parse reads flags before or after positional arguments ("drop FILE
// --object X" as well as "drop --object X FILE"), as gcloud does.
func (c *cmdline) parse() error {
	c.SetOutput(io.Discard)
	c.Usage = func() {}
	for args := c.args; ; {
		if err := c.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				c.writeHelp()
				return flag.ErrHelp
			}
			return c.flagError(err)
		}
		if args = c.Args(); len(args) == 0 {
			break
		}
		c.pos = append(c.pos, args[0])
		args = args[1:]
	}
	if err := c.checkArgs(); err != nil {
		return err
	}
	if want := strings.Split(c.cmd.formats, "|"); c.cmd.formats != "" && !slices.Contains(want, c.format) {
		return c.usagef("--format %q: want %s", c.format, strings.Join(want, " or "))
	}
	if c.cmd.server {
		u, err := serverURL(c.server)
		if err != nil {
			return c.usagef("--server %q: want HOST:PORT or a URL such as %s", c.server, localapi.DefaultURL)
		}
		c.srv = client.Server{URL: u}
	}
	return nil
}

func (c *cmdline) checkArgs() error {
	spec, n := c.cmd.args, len(c.pos)
	what := strings.Trim(spec, "[].")
	switch {
	case strings.Contains(spec, " | "): // alternatives: the command checks
	case spec == "" || strings.HasPrefix(spec, "-"): // a required flag is no argument
		if n > 0 {
			return c.usagef("takes no arguments, got %q (alpipe %s --help)", c.pos[0], c.Name())
		}
	case strings.HasPrefix(spec, "["):
		if n > 1 {
			return c.usagef("want at most one %s, got %d arguments (alpipe %s --help)", what, n, c.Name())
		}
	case strings.HasSuffix(spec, "..."):
		if n == 0 {
			return c.usagef("want %s (alpipe %s --help)", what, c.Name())
		}
	case n != 1:
		return c.usagef("want exactly one %s, got %d arguments (alpipe %s --help)", what, n, c.Name())
	}
	return nil
}

// serverURL reads an address as serve prints it (http://127.0.0.1:8080) or
// as a person types it (127.0.0.1:8080, localhost:8080).
func serverURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("not a server address")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// hoist moves --server and --format given before the command behind it:
// gcloud and bq take their global flags on either side of the command.
func hoist(args []string) []string {
	i := 0
	for i < len(args)-1 && strings.HasPrefix(args[i], "-") {
		name, _, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if name != "server" && name != "format" {
			break
		}
		if i += 2; inline {
			i--
		}
	}
	if i == 0 || i >= len(args) {
		return args
	}
	return append(slices.Clone(args[i:]), args[:i]...)
}

// dispatch runs one command. Help goes to stdout with exit status 0, as
// with gcloud and bq: asking for it is no error.
func dispatch(ctx context.Context, args []string, stdout io.Writer) error {
	args = hoist(args)
	if len(args) == 0 {
		usage(os.Stderr)
		return usageError{errors.New("no command given (alpipe help lists them)")}
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return dispatch(ctx, []string{args[1], "--help"}, stdout)
		}
		usage(stdout)
		return nil
	case "--version", "-version":
		args = []string{"version"}
	}
	var names []string
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			err := cmd.run(ctx, newCmdline(cmd, args[1:], stdout), stdout)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
		names = append(names, cmd.name)
	}
	if s := suggest(args[0], names); s != "" {
		return usageError{fmt.Errorf("unknown command %q: did you mean %q? (alpipe help lists the commands)", args[0], s)}
	}
	return usageError{fmt.Errorf("unknown command %q (alpipe help lists the commands)", args[0])}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: alpipe COMMAND [ARGS] [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
alpipe COMMAND --help shows a command's arguments, flags and examples.
Commands that talk to serve take --server HOST:PORT or URL (default
%s, or ALPIPE_SERVER); --server and --format may come before COMMAND too.
Exit status: 0 done; 1 failed (drop: also a row quarantined or the file
rejected); 2 a command line that is not one.
`, localapi.DefaultURL)
}

func (c *cmdline) writeHelp() {
	line := "alpipe " + c.Name()
	if c.cmd.args != "" {
		line += " " + c.cmd.args
	}
	aliases := slices.Collect(maps.Values(c.short))
	var flags strings.Builder
	c.VisitAll(func(f *flag.Flag) {
		if slices.Contains(aliases, f.Name) {
			return
		}
		name, use := flag.UnquoteUsage(f)
		if n, ok := map[string]string{"string": "VALUE", "int": "N", "duration": "DURATION", "value": "VALUE"}[name]; ok {
			name = n
		}
		value := ""
		if name != "" {
			value = " " + name
		}
		inLine, inList := "--"+f.Name+value, "--"+f.Name+value
		if s := c.short[f.Name]; s != "" {
			inLine, inList = "-"+s+value, "-"+s+", "+inList
		}
		if !strings.Contains(c.cmd.args, "--"+f.Name) {
			line += " [" + inLine + "]"
		}
		fmt.Fprintf(&flags, "  %s\n      %s", inList, use)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(&flags, " (default %s)", f.DefValue)
		}
		flags.WriteString("\n")
	})
	w := c.stdout
	fmt.Fprintf(w, "usage: %s\n\n%s.\n\narguments:\n  %s\n", line, c.cmd.summary, c.cmd.about)
	if flags.Len() > 0 {
		fmt.Fprintf(w, "\nflags:\n%s", flags.String())
	}
	if c.cmd.exit != "" {
		fmt.Fprintf(w, "\nexit status:\n  %s\n", c.cmd.exit)
	}
	fmt.Fprintln(w, "\nexamples:")
	for _, e := range c.cmd.examples {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// flagError rewrites the flag package's messages in the --name form the
// help shows.
func (c *cmdline) flagError(err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		c.VisitAll(func(f *flag.Flag) {
			if len(f.Name) > 1 {
				names = append(names, f.Name)
			}
		})
		if s := suggest(name, names); s != "" {
			return c.usagef("unknown flag --%s: did you mean --%s? (alpipe %s --help lists the flags)", name, s, c.Name())
		}
		return c.usagef("unknown flag --%s (alpipe %s --help lists the flags)", name, c.Name())
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return c.usagef("--%s needs a value (alpipe %s --help)", name, c.Name())
	}
	msg = strings.Replace(msg, "for flag -", "for --", 1)
	if i := strings.Index(msg, "for --"); i >= 0 {
		name, _, _ := strings.Cut(msg[i+len("for --"):], ":")
		if f := c.Lookup(name); f != nil {
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
	return c.usagef("%s (alpipe %s --help)", msg, c.Name())
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

// commands is the command table: what `alpipe help` lists and what each
// command's --help says besides its flags.
func commands() []command {
	return []command{
		{name: "serve", run: runServe,
			summary:  "run every function locally with embedded backends",
			about:    "none. Runs until Ctrl-C; client commands reach it at --addr (their --server, or ALPIPE_SERVER).",
			examples: []string{"alpipe serve", "alpipe serve --virtual-clock --start 2026-03-14T17:00:00Z --data .local-orders --addr 127.0.0.1:8081"}},
		{name: "drop", args: "FILE", server: true, formats: "text|json", run: runDrop,
			summary:  "upload a file to the local landing bucket and ingest it",
			about:    "FILE  a local CSV export. It lands as --object, which must match a contract (alpipe contracts).",
			exit:     "0 loaded in full (or DUPLICATE: the same content is loaded already), 1 a row quarantined, the file REJECTED or the ingest failed, 2 a command line that is not one",
			examples: []string{"alpipe drop testdata/exportaciones/2026/03/14/pedidos-erp.csv --object exportaciones/2026/03/14/pedidos-erp.csv"}},
		{name: "validate", args: "FILE", formats: "text|json", run: runValidate,
			summary:  "check a file against its contract without loading it (a dry run)",
			about:    "FILE  a local CSV export, checked against the contract its object name matches (--object, default as for drop). Nothing is loaded; no server is needed.",
			exit:     "0 every row valid, 1 a row would be quarantined or the file rejected, 2 a command line that is not one",
			examples: []string{"alpipe validate testdata/exportaciones/2026/03/14/pedidos-erp.csv --object exportaciones/2026/03/14/pedidos-erp.csv"}},
		{name: "contracts", formats: "text|json", run: runContracts,
			summary:  "list the feeds: object patterns, tables, columns and rules",
			about:    "none. Lists the embedded feeds: object pattern, table, columns, types and rules. No server is needed.",
			examples: []string{"alpipe contracts"}},
		{name: "aggregations", formats: "text|json", run: runAggregations,
			summary:  "list the event-time aggregations: windows, keys, delays and tables",
			about:    "none. Lists the declared event-time aggregations (internal/aggregation/declarations): window, key, measures, delays, accumulation, panes table and view. No server is needed.",
			examples: []string{"alpipe aggregations", "alpipe aggregations --format json"}},
		{name: "query", args: "SQL...", server: true, formats: "table|csv|json|jsonl", run: runQuery,
			summary:  "run SQL on the local warehouse",
			about:    "SQL  one read-only statement in DuckDB's SQL dialect on the local warehouse (quote it); tables by their bare names. jsonl is one JSON object per row.",
			examples: []string{`alpipe query "SELECT * FROM ventas_diarias_sku ORDER BY fecha, sku"`, `alpipe query "SELECT pais, sum(importe) FROM lineas_pedido GROUP BY 1" --format json`, `alpipe query "SELECT * FROM lineas_pedido" -o lineas.csv`}},
		{name: "tables", formats: "text|json", run: runTables,
			summary:  "list the warehouse's tables and views (no server needed)",
			about:    "none. Lists the tables and views of alpinashop_analitica with their layout, from the embedded schemas Terraform also uses; alpipe schema TABLE shows one's columns.",
			examples: []string{"alpipe tables"}},
		{name: "schema", args: "TABLE", formats: "text|json", run: runSchema,
			summary:  "show a table's columns, types and descriptions (no server needed)",
			about:    "TABLE  a table or view (alpipe tables lists them).",
			examples: []string{"alpipe schema lineas_pedido", "alpipe schema ventas_hora_pais --format json"}},
		{name: "publish", args: "FILE.jsonl", server: true, formats: "text|json", run: runPublish,
			summary:  "deliver orders from a JSONL file to AggregateOrders (or the Pub/Sub emulator)",
			about:    "FILE.jsonl  orders, one JSON object per line with its momento_evento (see testdata/pedidos/historia.jsonl). With PUBSUB_EMULATOR_HOST set they go to topic pedidos-nuevos on the emulator.",
			examples: []string{"alpipe publish testdata/pedidos/historia.jsonl"}},
		{name: "tick", server: true, formats: "text|json", run: runTick,
			summary:  "call AdvanceWatermark, optionally moving a virtual clock first",
			about:    "none. A time goes in --now.",
			examples: []string{"alpipe tick", "alpipe tick --now 2026-03-14T18:25:00Z"}},
		{name: "status", args: "[OBJECT]", server: true, formats: "text|json", run: runStatus,
			summary:  "did last night's files load? rejects, watermark, open windows, drops",
			about:    "OBJECT  optional: a landing object name (or gs://BUCKET/NAME); prints that object's ledger history (every generation and attempt outcome).",
			examples: []string{"alpipe status", "alpipe status exportaciones/2026/03/14/pedidos-erp.csv", "alpipe status --state FAILED", "alpipe status --watch 10s", "alpipe status --since 72h --format json"}},
		{name: "ls", args: "[PREFIX|gs://BUCKET/PREFIX]", server: true, formats: "text|json", run: runLs,
			summary:  "list objects of the local buckets (landing by default)",
			about:    "PREFIX  optional: objects of the landing bucket under it; gs://BUCKET/PREFIX lists another local bucket (alpinashop-cuarentena, alpinashop-staging).",
			examples: []string{"alpipe ls exportaciones/2026/03/", "alpipe ls gs://alpinashop-cuarentena/ --format json"}},
		{name: "quarantine", args: "ls [PREFIX] | get OBJECT", server: true, formats: "text|json", run: runQuarantine,
			summary:  "list quarantine files or download one (ls, get OBJECT)",
			about:    "ls lists the quarantine bucket (optionally under PREFIX); get writes one quarantine file (OBJECT or gs://alpinashop-cuarentena/OBJECT) to stdout, or to -o FILE.",
			examples: []string{"alpipe quarantine ls", "alpipe quarantine get cuarentena/lineas_pedido/exportaciones/2026/03/14/pedidos-erp.g1773500000000000.csv -o q.csv"}},
		{name: "backfill", args: "PREFIX|gs://BUCKET/PREFIX", server: true, formats: "text|json", run: runBackfill,
			summary:  "ingest every object under a prefix through the file-drop path",
			about:    "PREFIX  a prefix of the server's landing bucket (upload history first with drop --upload-only), or gs://BUCKET/PREFIX on Cloud Storage with the environment's backends (unless --server is given).",
			examples: []string{"alpipe drop --upload-only testdata/exportaciones/2026/03/14/pedidos-erp.csv --object exportaciones/2026/03/14/pedidos-erp.csv", "alpipe backfill exportaciones/2026/03/"}},
		{name: "requeue", args: "QUARANTINE_OBJECT", server: true, formats: "text|json", run: runRequeue,
			summary:  "turn a fixed quarantine file into a new landing object",
			about:    "QUARANTINE_OBJECT  a name in the local quarantine bucket (alpipe quarantine ls), or gs://BUCKET/NAME on Cloud Storage with the environment's backends (unless --server is given).",
			examples: []string{"alpipe quarantine get OBJECT -o fixed.csv   # edit fixed.csv, then:", "alpipe requeue OBJECT --file fixed.csv"}},
		{name: "replay", args: "FILE.jsonl | --from-table", server: true, formats: "text|json", run: runReplay,
			summary:  "run the window engine over historical orders (a bounded stream)",
			about:    "FILE.jsonl  historical orders (as for publish), or --from-table to replay lineas_pedido.",
			examples: []string{"alpipe replay --from-table --dates 2026-03-01..2026-03-13"}},
		{name: "reconcile", args: "--date YYYY-MM-DD", server: true, formats: "text|json", run: runReconcile,
			summary:  "compare real-time sales with lineas_pedido for a date",
			about:    "none. --date is required.",
			exit:     "0 every difference explained, 1 one is not (or the command failed), 2 a command line that is not one",
			examples: []string{"alpipe reconcile --date 2026-03-14"}},
		{name: "demo", run: runDemo,
			summary:  "start everything in-process and play the demo stories",
			about:    "none. Starts a private server on a free port and a temporary data folder, plays the demo stories and exits.",
			examples: []string{"alpipe demo"}},
		{name: "doctor", formats: "text|json", run: runDoctor,
			summary:  "check this machine for what the set-up commands need; print each fix",
			about:    "none. Checks Go, gcc, gcloud and its Firestore and Pub/Sub emulators, Java, Chromium and chromedriver, serve's port and data folder, and prints the fix for each missing piece. No server is needed.",
			exit:     "0 every required piece present, 1 one missing, 2 a command line that is not one",
			examples: []string{"alpipe doctor", "alpipe doctor --addr 127.0.0.1:8081 --data .local-orders --format json"}},
		{name: "version", run: runVersion,
			summary:  "print the version of this binary",
			about:    "none.",
			examples: []string{"alpipe version"}},
	}
}
