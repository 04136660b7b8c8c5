package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit"
)

// Secondary indexes in the CLI (SPEC §16): create --index, describe's
// index lines, scan --index and reindex.

const indexFlagHelp = "an index `NAME=COL[:TYPE],.../INCLUDED,...`: index columns (a key column needs no type; an attribute column String, Integer or Binary), then after / the included columns; repeatable, e.g. by_status=status:String/total"

// parseIndex reads create's --index value.
func parseIndex(s string) (tablekit.IndexSpec, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok || name == "" || rest == "" {
		return tablekit.IndexSpec{}, fmt.Errorf("--index %s: want NAME=COL[:TYPE],...[/INCLUDED,...]", shorten(s))
	}
	cols, inc, _ := strings.Cut(rest, "/")
	spec := tablekit.IndexSpec{Name: name}
	for part := range strings.SplitSeq(cols, ",") {
		col, typ, hasType := strings.Cut(part, ":")
		kc := tablekit.KeyColumn{Name: col}
		if hasType {
			t, err := parseType(typ)
			if err != nil {
				return spec, fmt.Errorf("--index %s column %q: %v", name, col, err)
			}
			kc.Type = t
		}
		spec.Columns = append(spec.Columns, kc)
	}
	if inc != "" {
		spec.Include = strings.Split(inc, ",")
	}
	return spec, nil
}

// indexString formats an index as --index takes it.
func indexString(ix tablekit.IndexSpec) string {
	var cols []string
	for _, c := range ix.Columns {
		cols = append(cols, c.Name+":"+c.Type.String())
	}
	s := ix.Name + "=" + strings.Join(cols, ",")
	if len(ix.Include) > 0 {
		s += "/" + strings.Join(ix.Include, ",")
	}
	return s
}

// describeIndexes prints describe's index lines.
func describeIndexes(e *env, m tablekit.TableMeta) {
	for _, ix := range m.Indexes {
		fmt.Fprintf(e.stdout, "index:              %s (%s)\n", indexString(ix), ix.State)
	}
}

// scanIndex prints the rows of an index, in index-key order.
func scanIndex(ctx context.Context, e *env, table, index string, rg rangeFlags, read []tablekit.ReadOption, out rowWriter) error {
	if *rg.start != "" || *rg.end != "" || *rg.prefix != "" {
		return usagef("--index reads the whole index: --start, --end and --prefix are not supported with it")
	}
	return e.withTable(ctx, table, func(db *tablekit.Client, m *tablekit.TableMeta) error {
		view, _, err := indexView(m, index) // the rows' key is the index key: the writers' header shows its columns
		if err != nil {
			return err
		}
		lo, hi := fullBound(view, tablekit.InfMin), fullBound(view, tablekit.InfMax)
		var opts []tablekit.RangeOption
		for _, o := range read {
			opts = append(opts, o)
		}
		if *rg.backward {
			lo, hi = hi, lo
			opts = append(opts, tablekit.Backward())
		}
		if *rg.limit > 0 {
			opts = append(opts, tablekit.Limit(*rg.limit))
		}
		if *rg.filter != "" {
			f, _, err := parseFilter(*rg.filter)
			if err != nil {
				return usagef("--filter: %v", err)
			}
			opts = append(opts, tablekit.WithFilter(f))
		}
		return printRows(out, view, db.Table(table).Index(index).Rows(ctx, lo, hi, opts...))
	})
}

func reindexCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	verify := fs.Bool("verify", false, "only compare the index with the rows and report; fail if they differ")
	return func(ctx context.Context, args []string) error {
		return e.withClient(ctx, func(db *tablekit.Client) error {
			rep, err := db.Reindex(ctx, args[0], args[1], *verify)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "rows %d, entries %d, missing %d, extra %d, added %d, removed %d\n", rep.Rows, rep.Entries, rep.Missing, rep.Extra, rep.Added, rep.Removed)
			if *verify && !rep.Exact() {
				return fmt.Errorf("index %q of table %q differs from the rows: %d missing, %d extra entries (extra entries are never read; reindex without --verify repairs)", args[1], args[0], rep.Missing, rep.Extra)
			}
			return nil
		})
	}
}
