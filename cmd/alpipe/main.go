// Command alpipe runs AlpinaShop's pipeline on a laptop: every function
// on one mux (functions.Mount, internal/httpserve), with a fake Cloud Storage, an embedded
// state store and DuckDB as the warehouse, all in one data folder.
//
//	alpipe serve [--addr 127.0.0.1:8080] [--data .local] [--virtual-clock [--start T]] [--log-format text|json]
//	alpipe drop FILE [--object PATH] [--upload-only] [--format text|json] [--server URL]
//	alpipe validate FILE [--object PATH]          (no server: a dry run of the contract)
//	alpipe contracts                              (no server: feeds, patterns, columns)
//	alpipe aggregations                           (no server: windows, keys, delays, tables)
//	alpipe query SQL [--max-rows 100] [--format table|csv|json|jsonl] [--output FILE] [--server URL]
//	alpipe tables [--format text|json]                (no server: the dataset's tables and views)
//	alpipe schema TABLE [--format text|json]          (no server: one table's columns)
//	alpipe publish FILE.jsonl [--server URL]      (PUBSUB_EMULATOR_HOST set: to the emulator topic)
//	alpipe tick [--now RFC3339] [--server URL]
//	alpipe status [OBJECT] [--since 24h] [--format text|json] [--server URL] [--cloud]
//	alpipe ls [PREFIX|gs://BUCKET/PREFIX] [--max 1000] [--format text|json] [--server URL]
//	alpipe quarantine ls [PREFIX] | get OBJECT [-o FILE]
//	alpipe backfill PREFIX|gs://BUCKET/PREFIX [--concurrency 4] [--server URL]
//	alpipe requeue QUARANTINE_OBJECT [--file FIXED.csv] [--server URL]
//	alpipe replay FILE.jsonl | --from-table [--dates A..B] [--server URL]
//	alpipe reconcile --date YYYY-MM-DD [--server URL]
//	alpipe demo [--testdata testdata]
//	alpipe doctor [--addr 127.0.0.1:8080] [--data .local] [--format text|json]
//	alpipe version
//
// alpipe COMMAND --help shows each command's arguments, flags and example.
// Errors are one line on stderr (under it, a query error may show its SQL
// line and caret) and a non-zero exit; --format json is one
// document in one style (see render.JSON). Client commands talk to serve
// through package client and fail at once when it does not answer.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/alpinashop/alpipe/internal/render"
	"github.com/alpinashop/alpipe/internal/warehouse/duckdb"
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run every function locally with embedded backends", runServe},
		{"drop", "upload a file to the local landing bucket and ingest it", runDrop},
		{"validate", "check a file against its contract without loading it (a dry run)", runValidate},
		{"contracts", "list the feeds: object patterns, tables, columns and rules", runContracts},
		{"aggregations", "list the event-time aggregations: windows, keys, delays and tables", runAggregations},
		{"query", "run SQL on the local warehouse", runQuery},
		{"tables", "list the warehouse's tables and views (no server needed)", runTables},
		{"schema", "show a table's columns, types and descriptions (no server needed)", runSchema},
		{"publish", "deliver orders from a JSONL file to AggregateOrders (or the Pub/Sub emulator)", runPublish},
		{"tick", "call AdvanceWatermark, optionally moving a virtual clock first", runTick},
		{"status", "did last night's files load? rejects, watermark, open windows, drops", runStatus},
		{"ls", "list objects of the local buckets (landing by default)", runLs},
		{"quarantine", "list quarantine files or download one (ls, get OBJECT)", runQuarantine},
		{"backfill", "ingest every object under a prefix through the file-drop path", runBackfill},
		{"requeue", "turn a fixed quarantine file into a new landing object", runRequeue},
		{"replay", "run the window engine over historical orders (a bounded stream)", runReplay},
		{"reconcile", "compare real-time sales with lineas_pedido for a date", runReconcile},
		{"demo", "start everything in-process and play the demo stories", runDemo},
		{"doctor", "check this machine for what the set-up commands need; print each fix", runDoctor},
		{"version", "print the version of this binary", runVersion},
	}
}

func main() {
	reexecWithAllocatorSettings()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "alpipe: "+errorText(err))
		os.Exit(1)
	}
}

// dispatch runs one command. Asking for help is not an error: help goes
// to stdout and the exit status is 0, as with gcloud and bq.
func dispatch(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		usage(os.Stderr)
		return errors.New("no command given (alpipe help lists them)")
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return dispatch(ctx, []string{args[1], "--help"}, stdout)
		}
		usage(stdout)
		return nil
	case "--version", "-version":
		return runVersion(ctx, nil, stdout)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, args[1:], stdout)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	names := make([]string, 0, len(commands()))
	for _, c := range commands() {
		names = append(names, c.name)
	}
	if s := suggest(args[0], names); s != "" {
		return fmt.Errorf("unknown command %q: did you mean %q? (alpipe help lists the commands)", args[0], s)
	}
	return fmt.Errorf("unknown command %q (alpipe help lists the commands)", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: alpipe COMMAND [ARGS] [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nalpipe COMMAND --help shows a command's arguments, flags and an example.")
}

// parse reads flags that may come before or after positional arguments
// ("drop FILE --object X" as well as "drop --object X FILE"). --help
// prints the command's help on stdout and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				writeHelp(stdout, fs)
				return nil, flag.ErrHelp
			}
			return nil, flagError(fs, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// listingFlags parses the flags of a command that lists something the binary
// carries (contracts, aggregations): no arguments, --format text or json.
func listingFlags(name string, args []string, stdout io.Writer) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	format := fs.String("format", "text", "output: text or json")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return "", err
	}
	if len(pos) > 0 {
		return "", fmt.Errorf("%s: takes no arguments", name)
	}
	if err := checkFormat(name, *format, "text", "json"); err != nil {
		return "", err
	}
	return *format, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
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
	env := append(os.Environ(), duckdb.JemallocConf+"="+duckdb.JemallocReturnFreed)
	// On success Exec does not return; on failure we simply run as we are.
	_ = syscall.Exec(exe, os.Args, env)
}

// report writes a command's report as JSON or as its own text.
func report(w io.Writer, format string, rep interface{ WriteText(io.Writer) error }) error {
	if format == "json" {
		return render.JSON(w, rep)
	}
	return rep.WriteText(w)
}
