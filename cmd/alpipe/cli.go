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
