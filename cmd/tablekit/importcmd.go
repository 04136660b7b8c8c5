package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/localengine"
)

// The input of import is JSON lines: export's header line and row lines,
// or, for a table that exists, row lines alone. A row line is export's
// form ({"key":{…},"columns":{…}}: typed values, explicit versions) or a
// plain object whose fields are the key columns, by name, and attribute
// columns written at the current time ({"id":"a","n":1,"price":9.5}).
//
// Nothing is written before the header is checked. Every row is checked
// against the library's own rules (on an in-memory table of the same
// schema) before it is written; when the input is a file, every row is
// checked before the first one is written. Every error names its line.

const importHelp = `
Input: JSON lines. Line 1 may be export's header, which names the table, its
key and its options:
    {"table":"orders","key":[{"name":"id","type":"String"}],"options":{"ttl":-1,"max_versions":1,"max_version_offset":86400}}
The table is created if missing; either way it ends with the header's options.
Without a header, name an existing table (tablekit import TABLE): its key
schema comes from the table. A row line is export's form, typed values and
explicit versions (ms), newest first:
    {"key":{"id":{"s":"o1"}},"columns":{"status":[{"ts":1700000000000,"s":"paid"}]}}
or a plain object: key columns by name, every other field a column written
at the current time (string: String; whole number: Integer; other number:
Double; true/false: Boolean; {"b":"BASE64"}: Binary; {"s":…} etc. as above):
    {"id":"o1","status":"paid","total":9.5}
A table's auto-increment key column (describe: NAME:Integer:auto) may be
left out of a row's key, in either form: the store assigns it, and the
row is a new one each time it is written (an import run again, or gone
on with --from-line after an error, writes such rows again as new rows).

While rows are written the table accepts any version and expires nothing;
its options are set back (or to the header's) on every way out: success, a
refused line, an error, Ctrl-C. Only a process killed outright (SIGKILL, a
crash) leaves them widened (ttl -1, max-version-offset 2147483646): import
and copy then refuse to take them for the table's own; running the same
import again to the end sets them. An interrupted or failed import prints
the command that goes on (--from-line); writing a row again is harmless.
`

func importCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	input := fs.String("i", "-", "input file (- for stdin)")
	fromLine := fs.Int("from-line", 0, "skip the row lines before line `N` (the header is still read): how an interrupted or failed import goes on")
	return func(ctx context.Context, args []string) error {
		if *fromLine < 0 {
			return usagef("--from-line %d must be at least 1", *fromLine)
		}
		// A pipe may block for good: reading it must not keep Ctrl-C waiting.
		var r io.Reader = newCtxReader(ctx, e.stdin)
		var path string // a regular file: every row is checked before any is written
		if *input != "-" {
			f, err := os.Open(*input)
			if err != nil {
				return err
			}
			defer f.Close()
			r = f
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				path = *input
			}
		}
		br := bufio.NewReaderSize(r, 1<<16)
		first, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if len(bytes.TrimSpace(first)) == 0 {
			return errors.New("line 1 is empty: want export's header line, or rows of an existing table (tablekit import TABLE); see tablekit import --help")
		}
		im := &importer{fromLine: *fromLine, stdin: *input == "-"}
		if im.header, err = isHeader(first); err != nil {
			return err
		}
		var m tablekit.TableMeta
		if im.header {
			if m, err = parseHeader(ctx, first, args); err != nil {
				return err
			}
			opts := m.Options
			im.final = &opts
		} else if len(args) == 0 {
			return fmt.Errorf("line 1 is a row, not export's header line: name the table to import into (tablekit import TABLE; it must exist), or start the input with a header such as %s", headerExample)
		}
		rest := io.MultiReader(bytes.NewReader(first), br)
		return e.withClient(ctx, func(db *tablekit.Client) error {
			if !im.header {
				cur, err := db.DescribeTable(ctx, args[0])
				if errors.Is(err, tablekit.ErrTableNotFound) {
					return fmt.Errorf("table %q does not exist, and the input has no header line to create it from: create it first (tablekit create %s --key NAME:TYPE,...), or start the input with a header such as %s",
						args[0], shellQuote(args[0]), headerExample)
				}
				if err != nil {
					return err
				}
				m = cur
			}
			if err := im.init(ctx, &m); err != nil {
				return err
			}
			if path != "" {
				f, err := os.Open(path)
				if err != nil {
					return err
				}
				n, err := im.check(ctx, f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%w (nothing written: every line is checked first)", err)
				}
				if n == 0 && !im.header {
					return errors.New("no rows to import")
				}
			}
			q := &lineQueue{}
			st, err := fillTable(ctx, db, &m, im.rows(ctx, rest, q), fillOptions{existing: true, final: im.final, done: func(_ tablekit.PrimaryKey, n int64) {
				q.written(n)
				if e.imported != nil {
					e.imported(n)
				}
			}})
			if err != nil {
				return im.failed(ctx, e, err, st, q)
			}
			fmt.Fprintf(e.stderr, "imported %s into %q\n", plural(st.rows, "row"), m.Name)
			return nil
		})
	}
}

// importer reads the rows of one import.
type importer struct {
	m        *tablekit.TableMeta
	header   bool
	fromLine int
	stdin    bool
	final    *tablekit.TableOptions // the header's options
	check1   *tablekit.Table        // the in-memory table rows are checked on
	hint     string                 // what a row line looks like
}

// init readies im for table m: the checking table and the hints.
func (im *importer) init(ctx context.Context, m *tablekit.TableMeta) error {
	im.m = m
	im.hint = rowHint(m)
	db := tablekit.NewClient(localengine.New())
	vm := tablekit.TableMeta{Name: m.Name, Key: m.Key, Options: copyOptions(overlay(defaultOptions, nil))}
	if err := db.CreateTable(ctx, vm); err != nil {
		return err
	}
	im.check1 = db.Table(m.Name)
	return nil
}

// lineError is an error of one input line.
type lineError struct {
	line int
	err  error
}

func (l *lineError) Error() string { return fmt.Sprintf("line %d: %v", l.line, l.err) }
func (l *lineError) Unwrap() error { return l.err }

// rows streams the rows of r (the whole input, line 1 first), each
// checked, recording each row's line in q.
func (im *importer) rows(ctx context.Context, r io.Reader, q *lineQueue) iter.Seq2[tablekit.Row, error] {
	return func(yield func(tablekit.Row, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
		line := 0
		for sc.Scan() {
			line++
			b := bytes.TrimSpace(sc.Bytes())
			if (line == 1 && im.header) || line < im.fromLine || len(b) == 0 {
				continue
			}
			row, err := im.decode(line, b)
			if err == nil {
				err = im.validate(ctx, &row)
			}
			if err != nil {
				yield(tablekit.Row{}, &lineError{line, err})
				return
			}
			if q != nil {
				q.push(line)
			}
			if !yield(row, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = errors.New("longer than 64 MiB: a row line must be shorter")
			}
			yield(tablekit.Row{}, &lineError{line + 1, err})
		}
	}
}

// check reads every row of r without writing it and returns how many
// there are, or the first line's error.
func (im *importer) check(ctx context.Context, r io.Reader) (int64, error) {
	var n int64
	for _, err := range im.rows(ctx, r, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// validate checks row with the library's rules, on the in-memory table.
func (im *importer) validate(ctx context.Context, row *tablekit.Row) error {
	var k tablekit.PrimaryKey // the key written: assigned, for an auto-increment column left out
	if err := im.check1.PutRow(ctx, row.Key, row.Columns, tablekit.ReturnKey(&k)); err != nil {
		return err
	}
	return im.check1.DeleteRow(ctx, k)
}

// decode reads one row line in either form.
func (im *importer) decode(line int, b []byte) (tablekit.Row, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("null")
		}
		return tablekit.Row{}, fmt.Errorf("not a JSON object (%s); %s", jsonProblem(err), im.hint)
	}
	if line > 1 {
		if h, _ := isHeader(b); h {
			return tablekit.Row{}, fmt.Errorf("a header line may only be line 1; %s", im.hint)
		}
	}
	if exportForm(obj) {
		row, err := decodeJSONRow(im.m, b)
		if err != nil {
			return row, fmt.Errorf("%s; %s", jsonProblem(err), im.hint)
		}
		return row, nil
	}
	row, err := decodeFlatRow(im.m, obj)
	if err != nil {
		return row, fmt.Errorf("%v; %s", err, im.hint)
	}
	return row, nil
}

// failed is import's error after fillTable failed: what was written, that
// the options are set, and the command that goes on.
func (im *importer) failed(ctx context.Context, e *env, err error, st fillStats, q *lineQueue) error {
	var le *lineError
	isLine := errors.As(err, &le)
	stopped := interrupted(ctx, err)
	if !stopped && st.rows == 0 && !isLine {
		return err // refused before any row: nothing to go on from
	}
	last := q.lastLine()
	next := im.fromLine
	if last > 0 {
		next = last + 1
	}
	done := fmt.Sprintf("no row written into %q", im.m.Name)
	if st.rows > 0 {
		done = fmt.Sprintf("%s written into %q, up to line %d", plural(st.rows, "row"), im.m.Name, last)
	}
	cmd := resumeImport(e.argv, next)
	if im.stdin {
		cmd += " (with the same input on stdin)"
	}
	if stopped {
		return fmt.Errorf("interrupted: %s; its options are set back; to go on, run: %s", done, cmd)
	}
	fix := ""
	if le != nil {
		fix = fmt.Sprintf(" fix line %d, then", le.line)
	}
	return fmt.Errorf("%w\n(%s; its options are set back;%s to go on, run: %s)", err, done, fix, cmd)
}

// resumeImport is argv with --from-line set to line (none when line is 0).
func resumeImport(argv []string, line int) string {
	var out []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		name := strings.TrimLeft(a, "-")
		if a == "--" {
			out = append(out, argv[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && (name == "from-line") {
			i++ // its value
			continue
		}
		if strings.HasPrefix(a, "-") && strings.HasPrefix(name, "from-line=") {
			continue
		}
		out = append(out, a)
	}
	if line > 1 {
		// Before a "--", if any: flags may sit anywhere else.
		at := slices.Index(out, "--")
		if at < 0 {
			at = len(out)
		}
		out = slices.Insert(out, at, "--from-line", strconv.Itoa(line))
	}
	return commandLine(out)
}

// lineQueue maps the rows fillTable reports written, in order, to their
// input lines.
type lineQueue struct {
	mu      sync.Mutex
	pending []int // lines of the rows read and not yet reported
	done    int64
	last    int
}

func (q *lineQueue) push(line int) {
	q.mu.Lock()
	q.pending = append(q.pending, line)
	q.mu.Unlock()
}

// written records that the first n rows are written.
func (q *lineQueue) written(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := int(n - q.done)
	if k <= 0 || k > len(q.pending) {
		return
	}
	q.last = q.pending[k-1]
	q.pending = q.pending[k:]
	q.done = n
}

// lastLine is the line of the last row written, 0 before the first.
func (q *lineQueue) lastLine() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
}

// headerExample is a header line, for messages.
const headerExample = `{"table":"NAME","key":[{"name":"id","type":"String"}],"options":{"ttl":-1,"max_versions":1,"max_version_offset":86400}}`

// isHeader reports whether line 1 is a header: an object with "table"
// and no fields but "table", "key" and "options".
func isHeader(b []byte) (bool, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("null")
		}
		return false, fmt.Errorf("line 1: not a JSON object (%s); an import starts with export's header line, such as %s, or is rows of an existing table (tablekit import TABLE)", jsonProblem(err), headerExample)
	}
	if _, ok := obj["table"]; !ok {
		return false, nil
	}
	for k := range obj {
		if k != "table" && k != "key" && k != "options" {
			return false, nil
		}
	}
	return true, nil
}

// parseHeader reads and checks the header line: its table (args[0]
// renames it) is checked by creating it on an in-memory engine, the
// library's own rules, before anything is written anywhere.
func parseHeader(ctx context.Context, b []byte, args []string) (tablekit.TableMeta, error) {
	fail := func(format string, a ...any) (tablekit.TableMeta, error) {
		return tablekit.TableMeta{}, fmt.Errorf("line 1 (the header): %s; a header line is %s, as export writes it", fmt.Sprintf(format, a...), headerExample)
	}
	var h jsonHeader
	if err := strictUnmarshal(b, &h); err != nil {
		return fail("%s", jsonProblem(err))
	}
	m, err := h.meta()
	if err != nil {
		return fail("%v", err)
	}
	if len(args) == 1 {
		m.Name = args[0]
	}
	if m.Name == "" {
		return fail(`"table" is empty (or name the table: tablekit import TABLE)`)
	}
	if len(m.Key) == 0 {
		return fail(`"key" lists no key column`)
	}
	db := tablekit.NewClient(localengine.New())
	if err := db.CreateTable(ctx, m); err != nil {
		return fail("%v", err)
	}
	if widened(m.Options) {
		return fail("ttl -1 with max-version-offset %d are the temporary options a killed import or copy leaves behind, not a table's own: write the table's options in \"options\"", int64(widenedOffset.Seconds()))
	}
	return m, nil
}

// jsonProblem is a decoding error in words, without Go type names.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return fmt.Sprintf("a JSON %s where %s is wanted", te.Value, jsonKind(te.Type.Kind().String()))
		}
		return fmt.Sprintf("%q is a JSON %s where %s is wanted", field, te.Value, jsonKind(te.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the JSON ends too soon"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "slice", "array":
		return "a list [...]"
	case "map", "struct", "ptr":
		return "an object {...}"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	}
	return "a number"
}

// exportForm reports whether a row line is export's form: "key" an object,
// and no field but "key" and "columns".
func exportForm(obj map[string]json.RawMessage) bool {
	k, ok := obj["key"]
	if !ok || !bytes.HasPrefix(bytes.TrimSpace(k), []byte("{")) {
		return false
	}
	for name := range obj {
		if name != "key" && name != "columns" {
			return false
		}
	}
	return true
}

// rowHint says what a row line of m looks like, in both forms.
func rowHint(m *tablekit.TableMeta) string {
	var typed, flat []string
	for _, kc := range m.Key {
		name, _ := json.Marshal(kc.Name)
		switch kc.Type {
		case tablekit.TypeInteger:
			typed, flat = append(typed, string(name)+`:{"i":1}`), append(flat, string(name)+`:1`)
		case tablekit.TypeBinary:
			typed, flat = append(typed, string(name)+`:{"b":"AAE="}`), append(flat, string(name)+`:"AAE="`)
		default:
			typed, flat = append(typed, string(name)+`:{"s":"a"}`), append(flat, string(name)+`:"a"`)
		}
	}
	return fmt.Sprintf(`a row line of table %q is {"key":{%s},"columns":{"price":[{"ts":1700000000000,"d":9.5}]}} (export's form) or {%s,"price":9.5} (a plain object); see tablekit import --help`,
		m.Name, strings.Join(typed, ","), strings.Join(flat, ","))
}

// decodeFlatRow reads a plain object: the key columns by name, every
// other field an attribute column written at the current time.
func decodeFlatRow(m *tablekit.TableMeta, obj map[string]json.RawMessage) (tablekit.Row, error) {
	var r tablekit.Row
	for _, kc := range m.Key {
		raw, ok := obj[kc.Name]
		if !ok && kc.AutoIncrement { // left out: the store assigns it
			r.Key = append(r.Key, tablekit.KeyPart{Name: kc.Name, Value: tablekit.AutoIncrement})
			continue
		}
		if !ok {
			return r, fmt.Errorf("the line lacks key column %q (table %q's key is %s)", kc.Name, m.Name, schemaString(m.Key))
		}
		v, err := flatValue(raw, kc.Type, true)
		if err != nil {
			return r, fmt.Errorf("key column %q: %v", kc.Name, err)
		}
		r.Key = append(r.Key, tablekit.KeyPart{Name: kc.Name, Value: v})
	}
	var names []string
	for name := range obj {
		if !slices.ContainsFunc(m.Key, func(kc tablekit.KeyColumn) bool { return kc.Name == name }) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		v, err := flatValue(obj[name], 0, false)
		if err != nil {
			return r, fmt.Errorf("column %q: %v", name, err)
		}
		r.Columns = append(r.Columns, tablekit.Column{Name: name, Value: v})
	}
	return r, nil
}

// flatValue reads one value of a plain object; for a key column, want is
// its type.
func flatValue(raw json.RawMessage, want tablekit.Type, key bool) (tablekit.Value, error) {
	raw = bytes.TrimSpace(raw)
	var v tablekit.Value
	switch {
	case len(raw) == 0:
		return v, errors.New("no value")
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return v, errors.New(jsonProblem(err))
		}
		switch {
		case key && want == tablekit.TypeBinary:
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return v, fmt.Errorf(`a Binary key is standard base64, as in "AAE=", or {"b":"AAE="}, not %s`, shorten(s))
			}
			return tablekit.Binary(b), nil
		case key && want == tablekit.TypeInteger:
			return v, fmt.Errorf("an Integer is a JSON number: write %s, not %q", s, s)
		}
		v = tablekit.String(s)
	case raw[0] == '{':
		var jv jsonValue
		if err := strictUnmarshal(raw, &jv); err != nil {
			return v, fmt.Errorf(`a typed value is one of {"s":"text"}, {"i":42}, {"d":1.5}, {"bool":true}, {"b":"BASE64"} (%s)`, jsonProblem(err))
		}
		var err error
		if v, err = jv.value(); err != nil {
			return v, err
		}
	case raw[0] == 't' || raw[0] == 'f':
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return v, errors.New(jsonProblem(err))
		}
		v = tablekit.Boolean(b)
	case raw[0] == 'n':
		return v, errors.New("null is not a value: leave the column out of the line")
	case raw[0] == '[':
		return v, errors.New(`a list is not a value: a column holds one value a version; give versions in export's form {"key":{…},"columns":{"c":[{"ts":1700000000001,"i":2},{"ts":1700000000000,"i":1}]}}`)
	default:
		s := string(raw)
		if !strings.ContainsAny(s, ".eE") {
			i, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return v, fmt.Errorf(`%s is not an int64 Integer; write {"d":%s} for a Double`, shorten(s), s)
			}
			v = tablekit.Integer(i)
			break
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return v, fmt.Errorf("%s is not a number", shorten(s))
		}
		v = tablekit.Double(f)
	}
	if key && v.Type() != want {
		return v, fmt.Errorf("the key column is %v, not %v", want, v.Type())
	}
	return v, nil
}

// ctxReader reads r in a goroutine of its own, so that a Read blocked on a
// quiet pipe returns the context's error once ctx is done.
type ctxReader struct {
	ctx  context.Context
	ch   chan readChunk
	buf  []byte
	err  error
	once sync.Once
	r    io.Reader
}

type readChunk struct {
	b   []byte
	err error
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	return &ctxReader{ctx: ctx, r: r, ch: make(chan readChunk)}
}

func (c *ctxReader) Read(p []byte) (int, error) {
	c.once.Do(func() {
		go func() {
			for {
				b := make([]byte, 1<<16)
				n, err := c.r.Read(b)
				select {
				case c.ch <- readChunk{b[:n], err}:
				case <-c.ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
	})
	for len(c.buf) == 0 && c.err == nil {
		select {
		case ch := <-c.ch:
			c.buf, c.err = ch.b, ch.err
		case <-c.ctx.Done():
			return 0, context.Cause(c.ctx)
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	if n > 0 {
		return n, nil
	}
	return 0, c.err
}
