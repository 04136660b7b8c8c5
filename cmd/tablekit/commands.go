package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tablekit/tablekit"
)

func init() {
	commands = []*command{
		{name: "ls", args: "", summary: "list the tables (-l: with key schema and options)", nargs: [2]int{0, 0}, flags: lsCmd},
		{name: "describe", args: "TABLE", summary: "print a table's key schema and options (-json: as create -json takes them)", nargs: [2]int{1, 1}, flags: describeCmd},
		{name: "create", args: "TABLE", summary: "create a table from --key and option flags, or from --json", nargs: [2]int{0, 1}, flags: createCmd, creates: true},
		{name: "alter", args: "TABLE", summary: "change a table's options", nargs: [2]int{1, 1}, flags: alterCmd},
		{name: "drop", args: "TABLE", summary: "delete a table and its rows (asks on a terminal; --yes otherwise)", nargs: [2]int{1, 1}, flags: dropCmd},
		{name: "get", args: "TABLE KEY", summary: "read one row (--index: by an index key)", nargs: [2]int{2, 2}, flags: getCmd},
		{name: "put", args: "TABLE KEY", summary: "replace one row with the --col cells", nargs: [2]int{2, 2}, flags: putCmd},
		{name: "delete", args: "TABLE KEY", summary: "delete one row", nargs: [2]int{2, 2}, flags: deleteCmd},
		{name: "scan", args: "TABLE", summary: "read a range of rows (bounds, prefix, filter, limit, backward, versions, time range; --index: of an index)", nargs: [2]int{1, 1}, flags: scanCmd, help: filterHelp},
		{name: "count", args: "TABLE", summary: "count the rows of a range (--filter: those that pass it; --index: of an index)", nargs: [2]int{1, 1}, flags: countCmd, help: filterHelp},
		{name: "export", args: "TABLE", summary: "write a table, every version, as JSON lines", nargs: [2]int{1, 1}, flags: exportCmd},
		{name: "import", args: "[TABLE]", summary: "write JSON lines (export's, or plain objects for an existing table) into a table", nargs: [2]int{0, 1}, flags: importCmd, creates: true, help: importHelp},
		{name: "tail", args: "[URL] TABLE", summary: "print a table's change feed as JSON lines (--follow: wait for more; --checkpoint: resumable)", nargs: [2]int{1, 2}, flags: tailCmd, help: tailHelp},
		{name: "feed", args: "TABLE [on|off]", summary: "show, enable or disable a table's change feed", nargs: [2]int{1, 2}, flags: feedCmd},
		{name: "reindex", args: "TABLE INDEX", summary: "repair an index from the rows (--verify: only report; fails on missing entries only)", nargs: [2]int{2, 2}, flags: reindexCmd, help: reindexHelp},
		{name: "copy", args: "SRC_URL DST_URL", summary: "copy one table or all, every version and the options, resumable and verified", nargs: [2]int{2, 2}, flags: copyCmd},
	}
}

func lsCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	long := fs.Bool("l", false, "long listing: key schema and options")
	return func(ctx context.Context, _ []string) error {
		return e.withClient(ctx, func(db *tablekit.Client) error {
			names, err := db.ListTables(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			for _, n := range names {
				if !*long {
					fmt.Fprintln(tw, n)
					continue
				}
				m, err := db.DescribeTable(ctx, n)
				if err != nil {
					return err
				}
				o := optionsToJSON(m.Options)
				fmt.Fprintf(tw, "%s\t%s\tttl=%d\tmax-versions=%d\tmax-version-offset=%d\n", n, schemaString(m.Key), o.TTL, o.MaxVersions, o.MaxVersionOffset)
			}
			return tw.Flush()
		})
	}
}

func describeCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	asJSON := fs.Bool("json", false, "print the JSON header that create --json and import take")
	return func(ctx context.Context, args []string) error {
		return e.withClient(ctx, func(db *tablekit.Client) error {
			m, err := db.DescribeTable(ctx, args[0])
			if err != nil {
				return err
			}
			if *asJSON {
				b, err := json.Marshal(headerOf(m))
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(e.stdout, "%s\n", b)
				return err
			}
			if widened(m.Options) {
				fmt.Fprintf(e.stderr, "tablekit describe: warning: %s\n", widenedHelp(m.Name))
			}
			o := optionsToJSON(m.Options)
			fmt.Fprintf(e.stdout, "table:              %s\nkey:                %s\n", m.Name, schemaString(m.Key))
			fmt.Fprintf(e.stdout, "ttl:                %d\nmax-versions:       %d\nmax-version-offset: %d\n", o.TTL, o.MaxVersions, o.MaxVersionOffset)
			describeIndexes(e, m)
			return nil
		})
	}
}

// optionFlags are the option flags of create and alter; zero means unset.
type optionFlags struct{ ttl, maxVersions, offset *int64 }

func addOptionFlags(fs *flag.FlagSet) optionFlags {
	return optionFlags{
		ttl:         fs.Int64("ttl", 0, "time to live of cells in seconds: -1 (never expire) or ≥ 86400"),
		maxVersions: fs.Int64("max-versions", 0, "versions kept visible per column (≥ 1)"),
		offset:      fs.Int64("max-version-offset", 0, "how far a written version may be from now, in seconds (≥ 1)"),
	}
}

func (o optionFlags) options() tablekit.TableOptions {
	return jsonOptions{TTL: *o.ttl, MaxVersions: int(*o.maxVersions), MaxVersionOffset: *o.offset}.options()
}

func createCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	key := fs.String("key", "", "key schema NAME:TYPE,... with TYPE String, Integer or Binary (e.g. id:String,seq:Integer); seq:Integer:auto: an auto-increment column")
	js := fs.String("json", "", "the table as JSON (describe --json's form), inline, @FILE or - for stdin")
	of := addOptionFlags(fs)
	var indexes listFlag
	fs.Var(&indexes, "index", indexFlagHelp)
	return func(ctx context.Context, args []string) error {
		var m tablekit.TableMeta
		switch {
		case *js != "" && *key != "":
			return usagef("give --key or --json, not both")
		case *js != "":
			b, err := readArg(e, *js)
			if err != nil {
				return err
			}
			var h jsonHeader
			if err := strictUnmarshal(b, &h); err != nil {
				return fmt.Errorf("--json: %v", err)
			}
			if m, err = h.meta(); err != nil {
				return err
			}
			if len(args) == 1 {
				m.Name = args[0]
			}
			o := of.options()
			if o != (tablekit.TableOptions{}) {
				return usagef("with --json, give the options in the JSON")
			}
		case *key != "":
			if len(args) != 1 {
				return usagef("want TABLE")
			}
			ks, err := parseSchema(*key)
			if err != nil {
				return usagef("--key: %v", err)
			}
			m = tablekit.TableMeta{Name: args[0], Key: ks, Options: of.options()}
		default:
			return usagef("give the key schema with --key NAME:TYPE,... or the table with --json")
		}
		for _, s := range indexes {
			spec, err := parseIndex(s)
			if err != nil {
				return usagef("%v", err)
			}
			m.Indexes = append(m.Indexes, spec)
		}
		return e.withClient(ctx, func(db *tablekit.Client) error { return db.CreateTable(ctx, m) })
	}
}

// readArg returns s, or the contents of FILE for @FILE, or stdin for -.
func readArg(e *env, s string) ([]byte, error) {
	switch {
	case s == "-":
		return io.ReadAll(e.stdin)
	case strings.HasPrefix(s, "@"):
		return os.ReadFile(s[1:])
	}
	return []byte(s), nil
}

func alterCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	of := addOptionFlags(fs)
	return func(ctx context.Context, args []string) error {
		o := of.options()
		if o == (tablekit.TableOptions{}) {
			return usagef("nothing to change: give --ttl, --max-versions or --max-version-offset")
		}
		return e.withClient(ctx, func(db *tablekit.Client) error { return db.UpdateTable(ctx, args[0], o) })
	}
}

func dropCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	yes := fs.Bool("yes", false, "do not ask")
	return func(ctx context.Context, args []string) error {
		return e.withClient(ctx, func(db *tablekit.Client) error {
			if _, err := db.DescribeTable(ctx, args[0]); err != nil {
				return err
			}
			if !*yes {
				if !e.stdinTTY {
					return fmt.Errorf("refusing to drop table %q without a terminal to ask on; pass --yes", args[0])
				}
				fmt.Fprintf(e.stderr, "Drop table %q and all its rows? Type the table's name to confirm: ", args[0])
				line, _ := bufio.NewReader(e.stdin).ReadString('\n')
				if strings.TrimSpace(line) != args[0] {
					return fmt.Errorf("not confirmed; table %q left as it is", args[0])
				}
			}
			return db.DeleteTable(ctx, args[0])
		})
	}
}

// readFlags are the read options of get and scan.
type readFlags struct {
	versions  *int
	columns   *string
	timeRange *string
	format    *string
}

func addReadFlags(fs *flag.FlagSet) readFlags {
	return readFlags{
		versions:  fs.Int("versions", 0, "versions per column to return (default 1; with --time-range, all in the range)"),
		columns:   fs.String("columns", "", "comma-separated attribute columns to return (default all)"),
		timeRange: fs.String("time-range", "", "versions in [START,END): ms since the epoch or RFC 3339 times, e.g. 1700000000000,1800000000000"),
		format:    fs.String("format", "table", "output: table, json (the export row lines) or csv"),
	}
}

// prepare returns the read options and the row writer the flags ask for.
func (r readFlags) prepare(w io.Writer) ([]tablekit.ReadOption, rowWriter, error) {
	opts, err := r.options()
	if err != nil {
		return nil, nil, err
	}
	out, err := newRowWriter(w, *r.format)
	return opts, out, err
}

func (r readFlags) options() ([]tablekit.ReadOption, error) {
	var opts []tablekit.ReadOption
	if *r.versions < 0 {
		return nil, usagef("--versions %d must be at least 1", *r.versions)
	}
	if *r.versions > 0 {
		opts = append(opts, tablekit.MaxVersions(*r.versions))
	}
	if *r.columns != "" {
		opts = append(opts, tablekit.Columns(strings.Split(*r.columns, ",")...))
	}
	if *r.timeRange != "" {
		a, b, ok := strings.Cut(*r.timeRange, ",")
		if !ok {
			return nil, usagef("--time-range wants START,END")
		}
		start, err := parseTime(a)
		if err != nil {
			return nil, usagef("--time-range start: %v", err)
		}
		end, err := parseTime(b)
		if err != nil {
			return nil, usagef("--time-range end: %v", err)
		}
		opts = append(opts, tablekit.Versions(start, end))
	}
	return opts, nil
}

func getCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	rf := addReadFlags(fs)
	index := fs.String("index", "", "read the row of the table's index `NAME` whose index key is KEY: "+indexKeyHelp+", e.g. status=pending,id=o1")
	return func(ctx context.Context, args []string) error {
		opts, out, err := rf.prepare(e.stdout)
		if err != nil {
			return err
		}
		if *index != "" {
			return getIndexRow(ctx, e, args[0], *index, args[1], opts, out)
		}
		return e.withKey(ctx, args[0], args[1], func(t *tablekit.Table, m *tablekit.TableMeta, k tablekit.PrimaryKey) error {
			row, found, err := t.GetRow(ctx, k, opts...)
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("row %s not found in table %q", formatKey(k), args[0])
			}
			if err := out.header(m); err != nil {
				return err
			}
			if err := out.row(&row); err != nil {
				return err
			}
			return out.flush()
		})
	}
}

// writeCondFlag is --if of put and delete.
func writeCondFlag(fs *flag.FlagSet) *string {
	return fs.String("if", "", "condition: exists or not-exists (default: none)")
}

func writeOptions(cond string) ([]tablekit.WriteOption, error) {
	switch cond {
	case "":
		return nil, nil
	case "exists":
		return []tablekit.WriteOption{tablekit.ExpectExist}, nil
	case "not-exists":
		return []tablekit.WriteOption{tablekit.ExpectNotExist}, nil
	}
	return nil, usagef("--if %q: want exists or not-exists", cond)
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func putCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	var cols listFlag
	fs.Var(&cols, "col", "a cell NAME=TYPE:VALUE[@VERSION], repeatable (see tablekit help keys); none: a key-only row")
	cond := writeCondFlag(fs)
	return func(ctx context.Context, args []string) error {
		wo, err := writeOptions(*cond)
		if err != nil {
			return err
		}
		return e.withKey(ctx, args[0], args[1], func(t *tablekit.Table, m *tablekit.TableMeta, k tablekit.PrimaryKey) error {
			types := indexTypes(m) // an untyped value of an index column takes the index's type
			var cells []tablekit.Column
			for _, c := range cols {
				col, err := parseColumnTyped(c, types)
				if err != nil {
					return usagef("--col: %v", err)
				}
				cells = append(cells, col)
			}
			if k.AutoIncrementIndex() < 0 {
				return t.PutRow(ctx, k, cells, wo...)
			}
			var got tablekit.PrimaryKey
			if err := t.PutRow(ctx, k, cells, append(wo, tablekit.ReturnKey(&got))...); err != nil {
				return err
			}
			_, err := fmt.Fprintln(e.stdout, formatKey(got)) // the key the store assigned
			return err
		})
	}
}

func deleteCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	cond := writeCondFlag(fs)
	return func(ctx context.Context, args []string) error {
		wo, err := writeOptions(*cond)
		if err != nil {
			return err
		}
		return e.withKey(ctx, args[0], args[1], func(t *tablekit.Table, m *tablekit.TableMeta, k tablekit.PrimaryKey) error {
			return t.DeleteRow(ctx, k, wo...)
		})
	}
}
