package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/tablekit/tablekit"
)

// Secondary indexes in the CLI (SPEC §16): create --index, describe's
// index lines, scan, count and get --index, put's typing of index
// columns, and reindex.

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

// indexKeyHelp says what an index key is, for the --index flags of scan,
// count and get.
const indexKeyHelp = "the index columns, then the table's other key columns (an attribute index column's value takes the type the index declares)"

// indexRangeHelp is the --index flag's help of scan and count.
const indexRangeHelp = "read the table's index `NAME` instead, in index-key order; --start, --end and --prefix are index keys: " + indexKeyHelp

// getIndexRow prints the index row of index of table whose index key is
// key (IndexTable.GetRow), under the index key's header.
func getIndexRow(ctx context.Context, e *env, table, index, key string, read []tablekit.ReadOption, out rowWriter) error {
	return e.withTable(ctx, table, func(db *tablekit.Client, m *tablekit.TableMeta) error {
		view, _, err := indexView(m, index)
		if err != nil {
			return err
		}
		k, err := parseKeyOf(view, keyOwner{table: table, index: index}, key, false, tablekit.Value{})
		if err != nil {
			return usagef("%v", err)
		}
		row, found, err := db.Table(table).Index(index).GetRow(ctx, k, read...)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no row of table %q has index %q key %s", table, index, formatKey(k))
		}
		if err := out.header(view); err != nil {
			return err
		}
		if err := out.row(&row); err != nil {
			return err
		}
		return out.flush()
	})
}

// columnTypes are the types the indexes of a table declare for its
// attribute columns (indexTypes): an untyped value of such a column, in
// put --col, the console's new-row form and a --filter comparison, is
// read as one of that type (columnTypes.value). The zero columnTypes
// declares nothing.
type columnTypes struct {
	table string
	// types maps a column that the indexes declare with one type to it.
	types map[string]tablekit.Type
	// conflicts maps a column that two indexes declare with different
	// types to what they declare ("by_a String, by_b Integer"): it has
	// no type, and an untyped value of it is refused saying why.
	conflicts map[string]string
}

// indexTypes is what the indexes of m declare: each attribute column an
// index declares with a type has that type, unless another index declares
// it with another one (then it has none).
func indexTypes(m *tablekit.TableMeta) columnTypes {
	ct := columnTypes{table: m.Name, types: map[string]tablekit.Type{}}
	declared := map[string][]string{} // column -> "index Type", in index order
	for _, ix := range m.Indexes {
		for _, c := range ix.Columns {
			if _, isKey := keyColumn(m, c.Name); isKey || c.Type == 0 {
				continue
			}
			if t, ok := ct.types[c.Name]; ok && t != c.Type {
				if ct.conflicts == nil {
					ct.conflicts = map[string]string{}
				}
				ct.conflicts[c.Name] = ""
			}
			ct.types[c.Name] = c.Type
			declared[c.Name] = append(declared[c.Name], fmt.Sprintf("%s %v", ix.Name, c.Type))
		}
	}
	for name := range ct.conflicts {
		delete(ct.types, name)
		ct.conflicts[name] = strings.Join(declared[name], ", ")
	}
	return ct
}

// value reads text, the value of column name in put --col or a filter:
// with a TYPE: prefix (or, without one, quoted: a String) as parseValue
// reads it, except that a column the indexes declare with a type takes
// that type when text has no TYPE:, written as in a key (a bare Binary is
// hex; a quoted literal is a String's or a Binary's bytes). A TYPE: given
// still wins. An untyped value of another column is parseValue's refusal,
// which says so when indexes declare the column with different types.
func (ct columnTypes) value(name, text string) (tablekit.Value, error) {
	prefix, rest := splitPrefix(text)
	t, typed := ct.types[name]
	if !typed {
		v, err := parseValue(text)
		if err != nil && prefix == "" && ct.conflicts[name] != "" {
			err = fmt.Errorf("%v; indexes of table %q declare column %q with different types (%s), so its value must name one", err, ct.table, name, ct.conflicts[name])
		}
		return v, err
	}
	var v tablekit.Value
	var err error
	if prefix == "" {
		v, err = parseLiteral(t, "", rest)
	} else {
		v, err = parseLiteral(typePrefixes[prefix], prefix, rest)
	}
	if err != nil {
		err = fmt.Errorf("%v (an index declares it %v)", err, t)
	}
	return v, err
}

const reindexHelp = `
Extra entries (an entry no row needs) are what every update of an index
column leaves by design, until reindex removes them (those over a minute
old: a younger one may belong to a write in flight); reads never return
them. --verify reports them as information and fails only on missing
entries, the ones that would make reads of the index wrong.

Exit status: 0 the index was repaired, or with --verify it has every entry
the rows need (extra entries or not); 1 with --verify an entry is missing
(run reindex without --verify to put it), or an error; 2 a usage error.
`

func reindexCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	verify := fs.Bool("verify", false, "only compare the index with the rows and report; fail if an entry a row needs is missing (extra entries are reported, not a failure)")
	return func(ctx context.Context, args []string) error {
		return e.withClient(ctx, func(db *tablekit.Client) error {
			rep, err := db.Reindex(ctx, args[0], args[1], *verify)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "rows %d, entries %d, missing %d, extra %d, added %d, removed %d\n", rep.Rows, rep.Entries, rep.Missing, rep.Extra, rep.Added, rep.Removed)
			if !*verify {
				if kept := rep.Extra - rep.Removed; kept > 0 {
					fmt.Fprintf(e.stdout, "%s kept: under a minute old, a write may still need them; run reindex again later to remove them\n", entries(kept, "stale "))
				}
				return nil
			}
			if rep.Extra > 0 {
				fmt.Fprintf(e.stdout, "%s left by updates (or failed writes): never read; index reads and `reindex` without --verify remove them once a minute old\n", entries(rep.Extra, "stale "))
			}
			if rep.Missing > 0 {
				return fmt.Errorf("index %q of table %q lacks %s that rows need: reads of the index miss those rows; reindex without --verify puts them", args[1], args[0], entries(rep.Missing, ""))
			}
			return nil
		})
	}
}

// entries is "1 stale entry", "2 stale entries".
func entries(n int, adj string) string {
	if n == 1 {
		return "1 " + adj + "entry"
	}
	return fmt.Sprintf("%d %sentries", n, adj)
}
