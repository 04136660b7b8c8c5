package main

import (
	"fmt"
	"strings"

	"github.com/tablekit/tablekit"
)

// The --filter expression of scan and count: SPEC §10's filters written
// as text, parsed into tablekit filters that the backend applies.
//
//	expr    = and { ("or" | "||") and }
//	and     = unary { ("and" | "&&") unary }
//	unary   = ("not" | "!") unary | "(" expr ")" | compare
//	compare = column OP VALUE
//	column  = NAME ["?"] | "any(" NAME ["?"] ")" ["?"]
//
// NAME is a column name (or `NAME` in backquotes, for a column called
// and, or, not); OP is ==, !=, <, <=, > or >=; VALUE is an attribute value
// as put --col takes it (s:TEXT or "quoted", i:42, d:1.5, bool:true,
// b:HEX, b64:BASE64; untyped for a column an index declares with a type:
// columnTypes.value). A row without the column fails the comparison
// (ColumnFilter.FilterIfMissing), unless the column is followed by ?
// (Tablestore's default: the row passes). any(NAME) lets any selected
// version match (ColumnFilter.AllVersions), not only the newest.

const filterHelp = `
Filter (--filter EXPR, scan and count): the rows whose columns pass EXPR,
tested by the backend:
    --filter 'status == s:pending'
    --filter 'total >= d:100 and not paid == bool:true'
    --filter '(region == s:eu or region == "uk") and qty > i:0'
    --filter 'note? != "spam"'          ? : a row without note passes too
    --filter 'any(price) < d:5'         any selected version, not only the newest
A comparison is COLUMN OP VALUE: OP one of == != < <= > >=, VALUE typed as
put --col takes it (s:TEXT or "quoted", i:INT, d:FLOAT, bool:BOOL, b:HEX,
or the type's name: String:TEXT, Integer:INT, ...; see tablekit help
keys). A column an index of the table declares with a type (create
--index by_status=status:String) takes that type when VALUE has none,
as in put: --filter 'status == pending', 'n > 5', 'blob == 0x00ff'.
A row that lacks the column FAILS the comparison, != included, so
'status == s:pending' never matches a row without status; write
COLUMN? to let such a row pass (Tablestore's default, and the library's
SingleColumnValue default). A cell of another type than VALUE never
matches: 'price > i:10' skips a Double price. Combine with and, or,
not (or &&, ||, !) and parentheses: not binds tightest, then and, then or.
Key columns are not filtered: select them with --prefix, --start, --end.
`

// parseFilter parses a --filter expression on the rows of table m (nil:
// no table, only the syntax). A comparison of a key column of m is
// refused: a filter tests attribute columns. A value without TYPE: of a
// column an index of m declares with a type takes that type, as in put
// (indexTypes).
func parseFilter(src string, m *tablekit.TableMeta) (tablekit.Filter, error) {
	p := &filterParser{src: src, m: m}
	if m != nil {
		p.types = indexTypes(m)
	}
	p.next()
	f, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf(p.tok.pos, "want \"and\", \"or\" or the end of the filter, found %s", p.tok.show())
	}
	return f, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokName
	tokOp  // == != < <= > >=
	tokAnd // and &&
	tokOr  // or ||
	tokNot // not !
	tokLParen
	tokRParen
	tokQuestion
	tokBad
)

type token struct {
	kind tokKind
	text string
	pos  int // byte offset in the source
	op   tablekit.CompareOp
}

func (t token) show() string {
	if t.kind == tokEOF {
		return "the end of the filter"
	}
	return fmt.Sprintf("%q", t.text)
}

type filterParser struct {
	src   string
	i     int
	tok   token
	m     *tablekit.TableMeta // the table filtered, or nil
	types columnTypes         // what the indexes of m declare
}

// filterError is a parse error at byte offset pos of src, shown with the
// expression and a caret under the place.
func filterError(src string, pos int, msg string) error {
	col := len([]rune(src[:min(pos, len(src))]))
	return usagef("--filter: at position %d: %s\n    %s\n    %s^", col+1, msg, src, strings.Repeat(" ", col))
}

func (p *filterParser) errorf(pos int, format string, a ...any) error {
	return filterError(p.src, pos, fmt.Sprintf(format, a...))
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// next reads the next token (not a value: see value).
func (p *filterParser) next() {
	for p.i < len(p.src) && strings.IndexByte(" \t\n\r", p.src[p.i]) >= 0 {
		p.i++
	}
	start := p.i
	if p.i >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: start}
		return
	}
	two := ""
	if p.i+1 < len(p.src) {
		two = p.src[p.i : p.i+2]
	}
	set := func(k tokKind, n int) {
		p.i += n
		p.tok = token{kind: k, text: p.src[start:p.i], pos: start}
	}
	switch two {
	case "==", "!=", "<=", ">=":
		set(tokOp, 2)
		p.tok.op = map[string]tablekit.CompareOp{"==": tablekit.Equal, "!=": tablekit.NotEqual, "<=": tablekit.LessEqual, ">=": tablekit.GreaterEqual}[two]
		return
	case "&&":
		set(tokAnd, 2)
		return
	case "||":
		set(tokOr, 2)
		return
	}
	switch c := p.src[p.i]; {
	case c == '<' || c == '>':
		set(tokOp, 1)
		p.tok.op = map[byte]tablekit.CompareOp{'<': tablekit.Less, '>': tablekit.Greater}[c]
	case c == '!':
		set(tokNot, 1)
	case c == '(':
		set(tokLParen, 1)
	case c == ')':
		set(tokRParen, 1)
	case c == '?':
		set(tokQuestion, 1)
	case c == '`':
		end := strings.IndexByte(p.src[p.i+1:], '`')
		if end < 0 {
			set(tokBad, len(p.src)-p.i)
			return
		}
		set(tokName, end+2)
		p.tok.text = p.src[start+1 : p.i-1]
	case isNameByte(c):
		n := 0
		for p.i+n < len(p.src) && isNameByte(p.src[p.i+n]) {
			n++
		}
		set(tokName, n)
		switch strings.ToLower(p.tok.text) {
		case "and":
			p.tok.kind = tokAnd
		case "or":
			p.tok.kind = tokOr
		case "not":
			p.tok.kind = tokNot
		}
	default:
		set(tokBad, 1)
	}
}

func (p *filterParser) or() (tablekit.Filter, error) {
	f, err := p.and()
	if err != nil {
		return nil, err
	}
	fs := []tablekit.Filter{f}
	for p.tok.kind == tokOr {
		p.next()
		g, err := p.and()
		if err != nil {
			return nil, err
		}
		fs = append(fs, g)
	}
	if len(fs) == 1 {
		return f, nil
	}
	return tablekit.Or(fs...), nil
}

func (p *filterParser) and() (tablekit.Filter, error) {
	f, err := p.unary()
	if err != nil {
		return nil, err
	}
	fs := []tablekit.Filter{f}
	for p.tok.kind == tokAnd {
		p.next()
		g, err := p.unary()
		if err != nil {
			return nil, err
		}
		fs = append(fs, g)
	}
	if len(fs) == 1 {
		return f, nil
	}
	return tablekit.And(fs...), nil
}

func (p *filterParser) unary() (tablekit.Filter, error) {
	switch p.tok.kind {
	case tokNot:
		p.next()
		f, err := p.unary()
		if err != nil {
			return nil, err
		}
		return tablekit.Not(f), nil
	case tokLParen:
		open := p.tok.pos
		p.next()
		f, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tokRParen {
			return nil, p.errorf(p.tok.pos, "want ) to close the ( at position %d, found %s", open+1, p.tok.show())
		}
		p.next()
		return f, nil
	}
	return p.compare()
}

// compare reads COLUMN OP VALUE.
func (p *filterParser) compare() (tablekit.Filter, error) {
	var f tablekit.ColumnFilter
	f.FilterIfMissing = true
	if p.tok.kind != tokName {
		return nil, p.errorf(p.tok.pos, "want a comparison COLUMN OP VALUE, \"not\" or \"(\" here, found %s", p.tok.show())
	}
	name := p.tok
	p.next()
	if strings.EqualFold(name.text, "any") && p.tok.kind == tokLParen && p.src[name.pos] != '`' {
		f.AllVersions = true
		p.next()
		if p.tok.kind != tokName {
			return nil, p.errorf(p.tok.pos, "want a column name in any(COLUMN), found %s", p.tok.show())
		}
		name = p.tok
		p.next()
		if p.tok.kind == tokQuestion {
			f.FilterIfMissing = false
			p.next()
		}
		if p.tok.kind != tokRParen {
			return nil, p.errorf(p.tok.pos, "want ) to close any(, found %s", p.tok.show())
		}
		p.next()
	}
	if p.tok.kind == tokQuestion {
		f.FilterIfMissing = false
		p.next()
	}
	f.Column = name.text
	if p.m != nil {
		if _, isKey := keyColumn(p.m, name.text); isKey {
			return nil, p.errorf(name.pos, "%q is a key column of table %q: a filter tests attribute columns; select keys with --prefix, --start or --end", name.text, p.m.Name)
		}
	}
	if p.tok.kind != tokOp {
		hint := ""
		if p.tok.text == "=" {
			hint = " (equality is ==)"
		}
		return nil, p.errorf(p.tok.pos, "want an operator ==, !=, <, <=, > or >= after column %q, found %s%s", name.text, p.tok.show(), hint)
	}
	f.Op = p.tok.op
	v, err := p.value(name.text)
	if err != nil {
		return nil, err
	}
	f.Value = v
	p.next()
	return f, nil
}

// value reads the VALUE compared with column after an operator: a quoted
// string, or a run up to a space or parenthesis, a TYPE: prefix followed
// by a quoted string included; p.types types it (columnTypes.value).
func (p *filterParser) value(column string) (tablekit.Value, error) {
	for p.i < len(p.src) && strings.IndexByte(" \t\n\r", p.src[p.i]) >= 0 {
		p.i++
	}
	start := p.i
	if p.i >= len(p.src) {
		return tablekit.Value{}, p.errorf(start, "want a value after the operator, such as s:text, i:42, d:1.5, bool:true")
	}
	quoted := func() bool { // reads a "..." at p.i
		for j := p.i + 1; j < len(p.src); j++ {
			switch p.src[j] {
			case '\\':
				j++
			case '"':
				p.i = j + 1
				return true
			}
		}
		return false
	}
	for p.i < len(p.src) && strings.IndexByte(" \t\n\r()", p.src[p.i]) < 0 {
		if p.src[p.i] == '"' {
			if !quoted() {
				return tablekit.Value{}, p.errorf(p.i, "unterminated quoted string")
			}
			break
		}
		p.i++
	}
	text := p.src[start:p.i]
	v, err := p.types.value(column, text)
	if err != nil {
		return v, p.errorf(start, "%v", err)
	}
	return v, nil
}
