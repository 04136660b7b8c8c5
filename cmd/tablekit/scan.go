package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit"
)

// parseTime reads milliseconds since the epoch or an RFC 3339 time.
func parseTime(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%s is neither milliseconds nor an RFC 3339 time", shorten(s))
	}
	return t.UnixMilli(), nil
}

// rangeFlags select a range of rows.
type rangeFlags struct {
	start, end, prefix *string
	filter             *string
	limit              *int
	backward           *bool
}

func addRangeFlags(fs *flag.FlagSet) rangeFlags {
	return rangeFlags{
		filter:   fs.String("filter", "", "only the rows whose columns pass `EXPR`, e.g. 'status == s:pending and total >= d:100' (see below)"),
		start:    fs.String("start", "", "first key (inclusive); leading columns only: the rest are MIN (MAX with --backward)"),
		end:      fs.String("end", "", "key to stop before (exclusive); leading columns only: the rest are MIN (MAX with --backward)"),
		prefix:   fs.String("prefix", "", "leading key columns the rows must have; the last one given matches as a byte prefix if String or Binary (id=ab: ids starting with ab)"),
		limit:    fs.Int("limit", 0, "stop after N rows (default: all)"),
		backward: fs.Bool("backward", false, "walk down from --start to --end"),
	}
}

// scanRange is a resolved range: bounds and, for --prefix, the predicate
// rows must pass (the walk stops at the first row past the prefix).
type scanRange struct {
	start, end tablekit.PrimaryKey
	keep       func(tablekit.PrimaryKey) bool
	lowest     tablekit.PrimaryKey // with keep: no matching row sorts below it
	backward   bool
	opts       []tablekit.RangeOption
}

// resolveOf resolves the flags over the key schema m.Key, which is owner's
// (a table's, or an index's: the bounds are then index keys, indexView's m).
func (r rangeFlags) resolveOf(m *tablekit.TableMeta, owner keyOwner) (*scanRange, error) {
	if *r.limit < 0 {
		return nil, usagef("--limit %d must be at least 1", *r.limit)
	}
	lo, hi := tablekit.InfMin, tablekit.InfMax
	sr := &scanRange{backward: *r.backward}
	if *r.prefix != "" {
		if *r.start != "" || *r.end != "" {
			return nil, usagef("--prefix cannot be combined with --start or --end")
		}
		parts, err := splitList(*r.prefix)
		if err != nil {
			return nil, usagef("--prefix: %v", err)
		}
		p, err := parseKeyOf(m, owner, *r.prefix, true, lo)
		if err != nil {
			return nil, usagef("--prefix: %v", err)
		}
		for _, kp := range p[:len(parts)] {
			if kp.Value.IsInf() {
				return nil, usagef("--prefix: MIN and MAX are not prefixes")
			}
		}
		sr.prefixBounds(p, len(parts))
	} else {
		startFill, endFill := lo, lo
		if sr.backward {
			startFill, endFill = hi, hi
		}
		sr.start, sr.end = fullBound(m, lo), fullBound(m, hi)
		if sr.backward {
			sr.start, sr.end = sr.end, sr.start
		}
		var err error
		if *r.start != "" {
			if sr.start, err = parseKeyOf(m, owner, *r.start, true, startFill); err != nil {
				return nil, usagef("--start: %v", err)
			}
		}
		if *r.end != "" {
			if sr.end, err = parseKeyOf(m, owner, *r.end, true, endFill); err != nil {
				return nil, usagef("--end: %v", err)
			}
		}
	}
	if sr.backward {
		sr.opts = append(sr.opts, tablekit.Backward())
	}
	if *r.limit > 0 && sr.keep == nil {
		sr.opts = append(sr.opts, tablekit.Limit(*r.limit))
	}
	return sr, nil
}

// fullBound is a key of m with every column v.
func fullBound(m *tablekit.TableMeta, v tablekit.Value) tablekit.PrimaryKey {
	k := make(tablekit.PrimaryKey, len(m.Key))
	for i, kc := range m.Key {
		k[i] = tablekit.KeyPart{Name: kc.Name, Value: v}
	}
	return k
}

// prefixBounds sets the bounds and predicate of the rows whose first n key
// columns are p's, the last of them matched as a byte prefix when it is a
// String or Binary and exactly when it is an Integer. p's columns after n
// are InfMin.
func (sr *scanRange) prefixBounds(p tablekit.PrimaryKey, n int) {
	last := p[n-1].Value
	lowest := p.Clone() // the smallest key that may match
	// above: the smallest key above every match (forward end, backward start).
	above := p.Clone()
	var succ tablekit.Value
	var pre string
	switch last.Type() {
	case tablekit.TypeInteger:
		i, _ := last.Int()
		succ = tablekit.InfMax
		if i < math.MaxInt64 {
			succ = tablekit.Integer(i + 1)
		}
	case tablekit.TypeString, tablekit.TypeBinary:
		if last.Type() == tablekit.TypeString {
			pre, _ = last.Str()
		} else {
			pre, _ = last.BytesString()
		}
		b := []byte(pre)
		for len(b) > 0 && b[len(b)-1] == 0xff {
			b = b[:len(b)-1]
		}
		succ = tablekit.InfMax
		if len(b) > 0 {
			b[len(b)-1]++
			if last.Type() == tablekit.TypeBinary {
				succ = tablekit.Binary(b)
			} else if utf8.Valid(b) {
				succ = tablekit.String(string(b))
			}
		}
	}
	above[n-1].Value = succ
	if succ.IsInf() {
		for i := n; i < len(above); i++ {
			above[i].Value = tablekit.InfMax
		}
	}
	sr.keep = func(k tablekit.PrimaryKey) bool {
		for i := 0; i < n-1; i++ {
			if !k[i].Value.Equal(p[i].Value) {
				return false
			}
		}
		v := k[n-1].Value
		if last.Type() == tablekit.TypeInteger {
			return v.Equal(last)
		}
		s, _ := v.Str()
		if last.Type() == tablekit.TypeBinary {
			s, _ = v.BytesString()
		}
		return strings.HasPrefix(s, pre)
	}
	sr.lowest = lowest
	if !sr.backward {
		sr.start, sr.end = lowest, above
		return
	}
	// Walking down from above (a row equal to it is skipped by keep) to
	// below every match.
	below := p.Clone()
	for i := n - 1; i < len(below); i++ {
		below[i].Value = tablekit.InfMin
	}
	sr.start, sr.end = above, below
}

// rangeReader reads rows from start towards end: Table.Rows, or
// IndexTable.Rows over index keys.
type rangeReader func(ctx context.Context, start, end tablekit.PrimaryKey, opts ...tablekit.RangeOption) iter.Seq2[tablekit.Row, error]

// rows streams the range read by read, applying the prefix predicate and
// the limit.
func (sr *scanRange) rows(ctx context.Context, rd rangeReader, limit int, read []tablekit.ReadOption) iter.Seq2[tablekit.Row, error] {
	opts := append([]tablekit.RangeOption{}, sr.opts...)
	for _, o := range read {
		opts = append(opts, o)
	}
	return func(yield func(tablekit.Row, error) bool) {
		n := 0
		for row, err := range rd(ctx, sr.start, sr.end, opts...) {
			if err != nil {
				yield(row, err)
				return
			}
			if sr.keep != nil && !sr.keep(row.Key) {
				// Rows come in key order: forward, the first miss is past
				// the prefix; backward, so is a row below the lowest match.
				if !sr.backward || tablekit.CompareKeys(row.Key, sr.lowest) < 0 {
					return
				}
				continue
			}
			if !yield(row, nil) {
				return
			}
			if n++; limit > 0 && n >= limit {
				return
			}
		}
	}
}

// printRows prints rows under m's header, then flushes; on a read error it
// flushes what was printed and returns the error (scan, scan --index). The
// header waits for the first answer, so a read refused at once (an option
// an index does not take, say) prints nothing on stdout.
func printRows(out rowWriter, m *tablekit.TableMeta, rows iter.Seq2[tablekit.Row, error]) error {
	started := false
	for row, err := range rows {
		if err != nil {
			if started {
				out.flush()
			}
			return err
		}
		if !started {
			if err := out.header(m); err != nil {
				return err
			}
			started = true
		}
		if err := out.row(&row); err != nil {
			return err
		}
	}
	if !started {
		if err := out.header(m); err != nil {
			return err
		}
	}
	return out.flush()
}

// rowWriter prints rows as a table, JSON lines or CSV.
type rowWriter interface {
	header(m *tablekit.TableMeta) error
	row(r *tablekit.Row) error
	flush() error
}

func newRowWriter(w io.Writer, format string) (rowWriter, error) {
	switch format {
	case "table":
		return &tableWriter{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}, nil
	case "json":
		return &jsonWriter{w: bufio.NewWriter(w)}, nil
	case "csv":
		return &csvWriter{w: csv.NewWriter(w)}, nil
	}
	return nil, usagef("--format %q: want table, json or csv", format)
}

// tableWriter prints one line per cell: KEY COLUMN VERSION VALUE, and a
// key-only row as its key and dashes. It flushes every 256 lines, so the
// columns align within each block.
type tableWriter struct {
	tw    *tabwriter.Writer
	lines int
}

func (t *tableWriter) header(*tablekit.TableMeta) error {
	_, err := fmt.Fprintln(t.tw, "KEY\tCOLUMN\tVERSION\tVALUE")
	return err
}

func (t *tableWriter) row(r *tablekit.Row) error {
	k := formatKey(r.Key)
	if len(r.Columns) == 0 {
		fmt.Fprintf(t.tw, "%s\t-\t-\t-\n", k)
		t.lines++
	}
	for _, c := range r.Columns {
		fmt.Fprintf(t.tw, "%s\t%s\t%d\t%s\n", k, c.Name, c.Version, formatValue(c.Value))
		t.lines++
	}
	if t.lines >= 256 {
		t.lines = 0
		return t.tw.Flush()
	}
	return nil
}

func (t *tableWriter) flush() error { return t.tw.Flush() }

type jsonWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (j *jsonWriter) header(*tablekit.TableMeta) error { return nil }

func (j *jsonWriter) row(r *tablekit.Row) error {
	var err error
	if j.buf, err = appendJSONRow(j.buf[:0], r); err != nil {
		return err
	}
	j.buf = append(j.buf, '\n')
	_, err = j.w.Write(j.buf)
	return err
}

func (j *jsonWriter) flush() error { return j.w.Flush() }

// csvWriter prints one record per cell: the key columns (in key syntax),
// then column, version, type and value (a Binary in base64).
type csvWriter struct {
	w *csv.Writer
}

func (c *csvWriter) header(m *tablekit.TableMeta) error {
	var rec []string
	for _, kc := range m.Key {
		rec = append(rec, kc.Name)
	}
	return c.w.Write(append(rec, "column", "version", "type", "value"))
}

func (c *csvWriter) row(r *tablekit.Row) error {
	rec := make([]string, 0, len(r.Key)+4)
	for _, p := range r.Key {
		rec = append(rec, formatKeyValue(p.Value))
	}
	if len(r.Columns) == 0 {
		return c.w.Write(append(rec, "", "", "", ""))
	}
	for _, col := range r.Columns {
		if err := c.w.Write(append(rec, col.Name, strconv.FormatInt(col.Version, 10), col.Value.Type().String(), plainValue(col.Value))); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvWriter) flush() error {
	c.w.Flush()
	return c.w.Error()
}

// plainValue is a value's text without type prefix (Binary in base64).
func plainValue(v tablekit.Value) string {
	switch v.Type() {
	case tablekit.TypeString:
		s, _ := v.Str()
		return s
	case tablekit.TypeBinary:
		b, _ := v.Bytes()
		return base64.StdEncoding.EncodeToString(b)
	}
	_, s, _ := strings.Cut(formatValue(v), ":")
	return s
}

func scanCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	rf := addReadFlags(fs)
	rg := addRangeFlags(fs)
	index := fs.String("index", "", indexRangeHelp)
	return func(ctx context.Context, args []string) error {
		read, out, err := rf.prepare(e.stdout)
		if err != nil {
			return err
		}
		return e.withRange(ctx, args[0], *index, rg, read, func(m *tablekit.TableMeta, rows iter.Seq2[tablekit.Row, error]) error {
			return printRows(out, m, rows)
		})
	}
}

func countCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	rg := addRangeFlags(fs)
	index := fs.String("index", "", indexRangeHelp)
	return func(ctx context.Context, args []string) error {
		return e.withRange(ctx, args[0], *index, rg, nil, func(_ *tablekit.TableMeta, rows iter.Seq2[tablekit.Row, error]) error {
			n := 0
			for _, err := range rows {
				if err != nil {
					return err
				}
				n++
			}
			_, err := fmt.Fprintln(e.stdout, n)
			return err
		})
	}
}

// withRange runs f on the rows of table name that rg selects, or, with
// index not "", on the rows of that index of it, rg's keys being index
// keys; f gets the rows' key schema (the table's, or indexView's).
func (e *env) withRange(ctx context.Context, name, index string, rg rangeFlags, read []tablekit.ReadOption, f func(*tablekit.TableMeta, iter.Seq2[tablekit.Row, error]) error) error {
	return e.withTable(ctx, name, func(db *tablekit.Client, m *tablekit.TableMeta) error {
		if *rg.filter != "" { // parsed with the table: its indexes type untyped values
			flt, err := parseFilter(*rg.filter, m)
			if err != nil {
				return err
			}
			read = append(read[:len(read):len(read)], tablekit.WithFilter(flt))
		}
		view, owner, rd := m, keyOwner{table: name}, rangeReader(db.Table(name).Rows)
		if index != "" {
			v, _, err := indexView(m, index)
			if err != nil {
				return err
			}
			view, owner.index, rd = v, index, db.Table(name).Index(index).Rows
		}
		sr, err := rg.resolveOf(view, owner)
		if err != nil {
			return err
		}
		return f(view, sr.rows(ctx, rd, *rg.limit, read))
	})
}

func exportCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	output := fs.String("o", "-", "output file (- for stdout)")
	return func(ctx context.Context, args []string) error {
		return e.withTable(ctx, args[0], func(db *tablekit.Client, m *tablekit.TableMeta) error {
			if widened(m.Options) {
				fmt.Fprintf(e.stderr, "tablekit export: warning: %s; import refuses this header until its \"options\" are the table's own\n", widenedHelp(m.Name))
			}
			w := e.stdout
			var f *os.File
			var err error
			if *output != "-" {
				if f, err = os.Create(*output); err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			if err := exportTable(ctx, db, m, w); err != nil {
				return err
			}
			if f != nil {
				return f.Close()
			}
			return nil
		})
	}
}

// exportTable writes m's header and every row with every visible version.
func exportTable(ctx context.Context, db *tablekit.Client, m *tablekit.TableMeta, w io.Writer) error {
	h, err := json.Marshal(headerOf(*m))
	if err != nil {
		return err
	}
	jw := &jsonWriter{w: bufio.NewWriterSize(w, 1<<16)}
	if _, err := jw.w.Write(append(h, '\n')); err != nil {
		return err
	}
	for row, err := range allRows(ctx, db, m) {
		if err != nil {
			return err
		}
		if err := jw.row(&row); err != nil {
			return err
		}
	}
	return jw.flush()
}

// allRows streams every row of m with every visible version.
func allRows(ctx context.Context, db *tablekit.Client, m *tablekit.TableMeta, opts ...tablekit.RangeOption) iter.Seq2[tablekit.Row, error] {
	opts = append(opts, tablekit.MaxVersions(m.Options.MaxVersions))
	return db.Table(m.Name).Rows(ctx, fullBound(m, tablekit.InfMin), fullBound(m, tablekit.InfMax), opts...)
}
