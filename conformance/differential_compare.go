package conformance

// What the differential test compares, and how it prints it.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tablekit/tablekit"
)

// diffErr is an error as compared: by its portable class only. Msg is shown
// in the diff but never compared.
type diffErr struct {
	Class string
	Msg   string
}

var errSentinels = []struct {
	name string
	err  error
}{
	{"InvalidArgument", tablekit.ErrInvalidArgument},
	{"TableNotFound", tablekit.ErrTableNotFound},
	{"AlreadyExists", tablekit.ErrAlreadyExists},
	{"ConditionFailed", tablekit.ErrConditionFailed},
	{"Throttled", tablekit.ErrThrottled},
	{"Unavailable", tablekit.ErrUnavailable},
	{"Unimplemented", tablekit.ErrUnimplemented},
	{"Canceled", context.Canceled},
	{"DeadlineExceeded", context.DeadlineExceeded},
}

// errClass names the portable sentinels err matches.
func errClass(err error) string {
	if err == nil {
		return ""
	}
	var names []string
	for _, s := range errSentinels {
		if errors.Is(err, s.err) {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		return "Unclassified"
	}
	return strings.Join(names, "|")
}

func outcomeErr(err error) diffErr {
	if err == nil {
		return diffErr{}
	}
	return diffErr{Class: errClass(err), Msg: err.Error()}
}

type rowOutcome struct {
	Key     string
	Columns []string
}

type writeOutcome struct {
	Err        diffErr
	Increments []string
}

type readOutcome struct {
	Err   diffErr
	Found bool
	Row   rowOutcome
}

type pageOutcome struct {
	Err  diffErr
	Rows []rowOutcome
	More bool // a resume token came back
}

type rowsOutcome struct {
	Err       diffErr
	Rows      []rowOutcome
	Truncated bool
}

type batchGetOutcome struct {
	Err     diffErr
	Results []readOutcome
}

type batchWriteOutcome struct {
	Err     diffErr
	Results []writeOutcome
}

type tableOutcome struct {
	PurgeErrs   []diffErr
	Err         diffErr
	DescribeErr diffErr
	Options     tablekit.TableOptions
	Key         tablekit.KeySchema
}

func outcomeCmpOptions() []cmp.Option {
	return []cmp.Option{
		cmp.Comparer(func(a, b diffErr) bool { return a.Class == b.Class }),
		cmpopts.EquateEmpty(), // nil and empty slices are the same answer
	}
}

func outcomeRow(r tablekit.Row) rowOutcome {
	v := rowOutcome{Key: shortKey(r.Key)}
	for _, c := range r.Columns {
		v.Columns = append(v.Columns, shortCell(c))
	}
	return v
}

func outcomeRows(rows []tablekit.Row) []rowOutcome {
	var out []rowOutcome
	for _, r := range rows {
		out = append(out, outcomeRow(r))
	}
	return out
}

func outcomeCells(cols []tablekit.Column) []string {
	var out []string
	for _, c := range cols {
		out = append(out, shortCell(c))
	}
	return out
}

// brief is a one-line rendering of an outcome for the trace.
func brief(x any) string {
	var s string
	switch o := x.(type) {
	case writeOutcome:
		s = errOr(o.Err, "ok")
		if len(o.Increments) > 0 {
			s += " " + strings.Join(o.Increments, " ")
		}
	case readOutcome:
		s = briefRead(o)
	case pageOutcome:
		s = errOr(o.Err, strings.TrimSpace(fmt.Sprintf("%d rows%s %s", len(o.Rows), map[bool]string{true: " +token"}[o.More], briefRows(o.Rows))))
	case rowsOutcome:
		s = strings.TrimSpace(fmt.Sprintf("%d rows %s", len(o.Rows), briefRows(o.Rows)))
		if o.Err.Class != "" {
			s += " then " + o.Err.Class
		}
	case batchGetOutcome:
		parts := make([]string, len(o.Results))
		for i, r := range o.Results {
			parts[i] = briefRead(r)
		}
		s = errOr(o.Err, "["+strings.Join(parts, "; ")+"]")
	case batchWriteOutcome:
		parts := make([]string, len(o.Results))
		for i, r := range o.Results {
			parts[i] = brief(r)
		}
		s = errOr(o.Err, "["+strings.Join(parts, "; ")+"]")
	case tableOutcome:
		s = errOr(o.Err, "ok")
		for _, e := range o.PurgeErrs {
			s = errOr(e, "ok") + ", " + s
		}
		s += ", then " + errOr(o.DescribeErr, fmt.Sprintf("key %v %+v", o.Key, o.Options))
	case staleOutcome:
		s = errOr(o.Err, "ok") + ", then " + errOr(o.Sync.DescribeErr, fmt.Sprintf("key %v %+v", o.Sync.Key, o.Sync.Options))
	default:
		s = fmt.Sprintf("%+v", x)
	}
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

func briefRead(o readOutcome) string {
	if o.Err.Class != "" {
		return o.Err.Class
	}
	if !o.Found {
		return "not found"
	}
	return "found " + strings.Join(o.Row.Columns, " ")
}

func briefRows(rows []rowOutcome) string {
	if len(rows) == 0 {
		return ""
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	return strings.Join(keys, " ")
}

func errOr(e diffErr, ok string) string {
	if e.Class != "" {
		return "error " + e.Class
	}
	return ok
}

func countErrs(m map[string]int, x any) {
	add := func(e diffErr) {
		if e.Class != "" {
			m[e.Class]++
		}
	}
	switch o := x.(type) {
	case writeOutcome:
		add(o.Err)
	case readOutcome:
		add(o.Err)
	case pageOutcome:
		add(o.Err)
	case rowsOutcome:
		add(o.Err)
	case batchGetOutcome:
		add(o.Err)
		for _, r := range o.Results {
			add(r.Err)
		}
	case batchWriteOutcome:
		add(o.Err)
		for _, r := range o.Results {
			add(r.Err)
		}
	case tableOutcome:
		add(o.Err)
		add(o.DescribeErr)
		for _, e := range o.PurgeErrs {
			add(e)
		}
	case staleOutcome:
		add(o.Err)
		add(o.Sync.DescribeErr)
	}
}

func shortValue(v tablekit.Value) string {
	if b, ok := v.BytesString(); ok {
		return fmt.Sprintf("Binary(0x%x)", b)
	}
	return v.GoString()
}

func shortKey(k tablekit.PrimaryKey) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, p := range k {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name + "=" + shortValue(p.Value))
	}
	b.WriteByte(')')
	return b.String()
}

func shortCell(c tablekit.Column) string {
	return fmt.Sprintf("%s@%d=%s", c.Name, c.Version, shortValue(c.Value))
}

func fmtPutCols(cols []tablekit.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		if c.Version == 0 {
			parts[i] = fmt.Sprintf("%s@now=%s", c.Name, shortValue(c.Value))
		} else {
			parts[i] = shortCell(c)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtChanges(chs []tablekit.Change) string {
	parts := make([]string, len(chs))
	for i, c := range chs {
		switch c.Kind {
		case tablekit.ChangePut:
			if c.Version == 0 {
				parts[i] = fmt.Sprintf("Put(%s, %s)", c.Column, shortValue(c.Value))
			} else {
				parts[i] = fmt.Sprintf("PutAt(%s, %s, %d)", c.Column, shortValue(c.Value), c.Version)
			}
		case tablekit.ChangeDeleteVersion:
			parts[i] = fmt.Sprintf("DeleteVersion(%s, %d)", c.Column, c.Version)
		case tablekit.ChangeDeleteColumn:
			parts[i] = fmt.Sprintf("DeleteColumn(%s)", c.Column)
		case tablekit.ChangeIncrement:
			parts[i] = fmt.Sprintf("Increment(%s, %d)", c.Column, c.Delta)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtFilter(f tablekit.Filter) string {
	switch f := f.(type) {
	case nil:
		return "nil"
	case tablekit.ColumnFilter:
		s := fmt.Sprintf("%s %v %s", f.Column, f.Op, shortValue(f.Value))
		if f.FilterIfMissing {
			s += " !missing"
		}
		if f.AllVersions {
			s += " allversions"
		}
		return "{" + s + "}"
	case tablekit.CompositeFilter:
		parts := make([]string, len(f.Filters))
		for i, s := range f.Filters {
			parts[i] = fmtFilter(s)
		}
		return f.Op.String() + "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprintf("%#v", f)
}

func fmtCond(c tablekit.Condition) string {
	if c.IsZero() {
		return ""
	}
	s := " if " + c.Row.String()
	if c.Column != nil {
		s += " && " + fmtFilter(c.Column)
	}
	return s
}
