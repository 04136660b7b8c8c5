// Command tablekit is for operators and developers: it inspects, edits,
// exports and copies tables on any tablekit backend, named by URL:
//
//	tablekit -url file:///var/lib/app ls
//	tablekit -url 'dynamodb://?region=us-east-1' scan orders --prefix customer=c42
//	tablekit scan orders --filter 'status == s:pending and total >= i:1000'
//	tablekit scan orders --index by_status --prefix status=pending
//	tablekit copy 'bigtable://proj/inst' 'tablestore://inst?endpoint=https://…' --checkpoint cp.json
//
// The URL comes from -url or, by convention, the TABLEKIT_URL environment
// variable. Run "tablekit help" for the commands and "tablekit help keys"
// for how keys and values are written on the command line.
//
// Exit status: 0 on success, 1 on an error (printed on stderr), 2 on a
// usage error (an unknown command or flag, a wrong argument count).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
	"github.com/tablekit/tablekit/fileengine"
)

// env is what a command runs with: its streams and the global settings.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	url            string
	// stdinTTY and stderrTTY say whether the drop prompt may ask and the
	// copy progress line may be drawn.
	stdinTTY, stderrTTY bool
	// mayCreate is set for the commands that may make a new store (create,
	// import): every other command refuses a file:// directory without one.
	mayCreate bool
	// argv is the command line, for the resume hint of an interrupted run.
	argv []string
	// client, if set, is the store every command uses instead of opening
	// the URL, and is not closed by it (the console runs import on its own).
	client *tablekit.Client
	// imported, if set, is called with the rows an import has written so
	// far (the console's progress bar).
	imported func(rows int64)
}

// command is one subcommand.
type command struct {
	name    string
	args    string // positional arguments, for the usage line
	summary string
	// flags declares the command's flags on fs and returns the function
	// that runs it with the positional arguments.
	flags func(fs *flag.FlagSet, e *env) func(ctx context.Context, args []string) error
	nargs [2]int // min and max positional arguments (-1: no max)
	// creates: the command may make a new store (see env.mayCreate).
	creates bool
	// help, if set, is printed after the flags by --help.
	help string
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errHelp is returned after --help printed the usage: exit status 0.
var errHelp = errors.New("help")

var commands []*command

func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	e := &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		stdinTTY: isTerminal(os.Stdin), stderrTTY: isTerminal(os.Stderr),
		argv: os.Args,
	}
	code := run(ctx, e, os.Args[1:])
	stop()
	os.Exit(code)
}

func mainUsage(w io.Writer) {
	fmt.Fprintf(w, `tablekit inspects, edits, exports and copies tables on any tablekit backend.

Usage:
    tablekit [-url URL] COMMAND [flags] [arguments]

The URL defaults to $%s. Registered schemes: %s
    mem://[NAME]                              the in-process local engine
    file:///ABS/DIR[?nosync=true]             the durable local engine (file://./REL/DIR:
                                              relative; only create and import make a store)
    bigtable://PROJECT/INSTANCE               Bigtable (BIGTABLE_EMULATOR_HOST honoured)
    dynamodb://?region=R[&endpoint=URL]       DynamoDB (default AWS credential chain)
    tablestore://INSTANCE?endpoint=URL        Tablestore (TABLESTORE_ACCESS_KEY_ID/_SECRET)

Commands:
`, tablekit.EnvURL, strings.Join(tablekit.Schemes(), ", "))
	for _, c := range commands {
		fmt.Fprintf(w, "    %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Run "tablekit COMMAND --help" for a command's flags and "tablekit help keys"
for how to write keys and values. Flags may come before or after the
arguments; "--" ends them.

Exit status: 0 success, 1 error, 2 usage error.
`)
}

// run runs the command line args and returns the exit status.
func run(ctx context.Context, e *env, args []string) int {
	global := flag.NewFlagSet("tablekit", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	global.StringVar(&e.url, "url", os.Getenv(tablekit.EnvURL), "backend URL")
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			mainUsage(e.stdout)
			return 0
		}
		fmt.Fprintf(e.stderr, "tablekit: %v\n", err)
		mainUsage(e.stderr)
		return 2
	}
	args = global.Args()
	if len(args) == 0 {
		mainUsage(e.stderr)
		return 2
	}
	name, args := args[0], args[1:]
	if name == "help" {
		return help(e, args)
	}
	c := lookup(name)
	if c == nil {
		fmt.Fprintf(e.stderr, "tablekit: unknown command %q; run \"tablekit help\"\n", name)
		return 2
	}
	err := runCommand(ctx, e, c, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "tablekit %s: %v\n", c.name, err)
		fmt.Fprintf(e.stderr, "usage: tablekit %s [flags] %s (see tablekit %s --help)\n", c.name, c.args, c.name)
		return 2
	}
	fmt.Fprintf(e.stderr, "tablekit %s: %v\n", c.name, err)
	return 1
}

func help(e *env, args []string) int {
	switch {
	case len(args) == 0:
		mainUsage(e.stdout)
	case args[0] == "keys":
		fmt.Fprint(e.stdout, keySyntaxHelp)
	case lookup(args[0]) != nil:
		c := lookup(args[0])
		fs := newFlagSet(c, e)
		c.flags(fs, e)
		commandUsage(e.stdout, c, fs)
	default:
		fmt.Fprintf(e.stderr, "tablekit help: unknown topic %q\n", args[0])
		return 2
	}
	return 0
}

func newFlagSet(c *command, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&e.url, "url", e.url, "backend URL (default $"+tablekit.EnvURL+")")
	return fs
}

func commandUsage(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: tablekit %s [flags] %s\n\n%s\n\nFlags:\n", c.name, c.args, c.summary)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprint(w, c.help)
}

// runCommand parses c's flags, which may sit before, between or after the
// positional arguments, and runs it.
func runCommand(ctx context.Context, e *env, c *command, args []string) error {
	fs := newFlagSet(c, e)
	do := c.flags(fs, e)
	e.mayCreate = c.creates
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				commandUsage(e.stdout, c, fs)
				return errHelp
			}
			return usagef("%v", err)
		}
		consumed := len(args) - fs.NArg()
		rest := fs.Args()
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) < c.nargs[0] || (c.nargs[1] >= 0 && len(pos) > c.nargs[1]) {
		return usagef("want %s, got %d argument(s)", c.args, len(pos))
	}
	return do(ctx, pos)
}

// open opens the client of the command's URL.
func (e *env) open(ctx context.Context) (*tablekit.Client, error) {
	if e.url == "" {
		return nil, usagef("no backend URL: pass -url or set %s (for example file:///tmp/db)", tablekit.EnvURL)
	}
	return openStore(ctx, e.url, e.mayCreate)
}

// openStore opens url. Unless mayCreate, a file:// URL must name a
// directory that holds a store: a mistyped path is an error, not a new
// empty store.
func openStore(ctx context.Context, raw string, mayCreate bool) (*tablekit.Client, error) {
	u, err := url.Parse(raw)
	if mayCreate || err != nil || u.Scheme != "file" || u.Query().Has("mustexist") {
		db, err := tablekit.Open(ctx, raw)
		return db, lockedHint(err)
	}
	q := u.Query()
	q.Set("mustexist", "true")
	u.RawQuery = q.Encode()
	db, err := tablekit.Open(ctx, u.String())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no tablekit store (is the path right? only create, import and copy's destination make a new store): %w", driver.ShowURL(u), err)
	}
	return db, lockedHint(err)
}

// lockedHint adds to the error of opening a file:// store that another
// process has open (one process at a time opens a directory) what to do.
func lockedHint(err error) error {
	if !errors.Is(err, fileengine.ErrLocked) {
		return err
	}
	return fmt.Errorf("%w\n(a file:// store is opened by one process at a time: to use it from several, serve it with the emulator, tablestore-emulator -backend file:///DIR, and give every program and tablekit command its tablestore://…?endpoint=http://HOST:PORT URL instead)", err)
}

// withClient opens the client, runs f and closes the client.
func (e *env) withClient(ctx context.Context, f func(db *tablekit.Client) error) (err error) {
	if e.client != nil {
		return f(e.client)
	}
	db, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	return f(db)
}

// withTable runs f on the described table name.
func (e *env) withTable(ctx context.Context, name string, f func(db *tablekit.Client, m *tablekit.TableMeta) error) error {
	return e.withClient(ctx, func(db *tablekit.Client) error {
		m, err := db.DescribeTable(ctx, name)
		if err != nil {
			return err
		}
		return f(db, &m)
	})
}

// withKey runs f on table name and the full key the argument key gives.
func (e *env) withKey(ctx context.Context, name, key string, f func(t *tablekit.Table, m *tablekit.TableMeta, k tablekit.PrimaryKey) error) error {
	return e.withTable(ctx, name, func(db *tablekit.Client, m *tablekit.TableMeta) error {
		k, err := parseKey(m, key, false, tablekit.Value{})
		if err != nil {
			return usagef("%v", err)
		}
		return f(db.Table(name), m, k)
	})
}

// shellQuote quotes s for a POSIX shell when it needs it, so that a
// command the tool prints can be pasted back.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commandLine is argv as a shell command: the program as "tablekit", the
// arguments quoted. URLs in it hold no credentials: no backend opens a URL
// that has one (tablekit.OpenBackend's credential rule).
func commandLine(argv []string) string {
	parts := []string{"tablekit"}
	for _, a := range argv[1:] {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// plural is "1 row", "2 rows".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// interrupted reports whether err ends a run because ctx was cancelled
// (Ctrl-C or SIGTERM).
func interrupted(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil
}
