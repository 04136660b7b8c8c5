package tablekit

import (
	"math"
	"time"
	"unicode/utf8"

	"github.com/tablekit/tablekit/internal/base"
)

// This file is the one validation of SPEC.md that every backend shares: the
// client runs it before any backend is called, so a bad request gets the same
// typed error everywhere and never writes anything.

func invalid(format string, args ...any) *Error { return Errorf(ErrInvalidArgument, format, args...) }

// checkName applies SPEC §1 to a table or column name; what is "table",
// "primary-key column" or "column".
func checkName(what, name string) *Error {
	if base.ValidName(name) {
		return nil
	}
	if len(name) == 0 || len(name) > MaxNameLength {
		return invalid("%s name %q must be 1-%d bytes long, got %d", what, truncate(name), MaxNameLength, len(name))
	}
	return invalid("%s name %q must match [A-Za-z_][A-Za-z0-9_]*", what, truncate(name))
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

func checkOptions(o TableOptions) *Error {
	if ttl, whole := seconds(o.TTL); !whole {
		return invalid("TTL %v must be a whole number of seconds", o.TTL)
	} else if o.TTL != NoExpiry && (ttl < int64(MinTTL/time.Second) || ttl > MaxOptionValue) {
		return invalid("TTL %v (%d s) must be NoExpiry (-1 s, never expire) or %d-%d seconds", o.TTL, ttl, int64(MinTTL/time.Second), MaxOptionValue)
	}
	if o.MaxVersions < 1 || o.MaxVersions > MaxOptionValue {
		return invalid("MaxVersions %d must be 1-%d", o.MaxVersions, MaxOptionValue)
	}
	if off, whole := seconds(o.MaxVersionOffset); !whole {
		return invalid("MaxVersionOffset %v must be a whole number of seconds", o.MaxVersionOffset)
	} else if off < 1 || off > MaxOptionValue {
		return invalid("MaxVersionOffset %v (%d s) must be 1-%d seconds", o.MaxVersionOffset, off, MaxOptionValue)
	}
	return nil
}

// resolveCreateOptions fills defaults of zero fields.
func resolveCreateOptions(o TableOptions) TableOptions {
	if o.TTL == 0 {
		o.TTL = NoExpiry
	}
	if o.MaxVersions == 0 {
		o.MaxVersions = DefaultMaxVersions
	}
	if o.MaxVersionOffset == 0 {
		o.MaxVersionOffset = DefaultMaxVersionOffset
	}
	return o
}

func checkMeta(m *TableMeta) *Error {
	if err := checkName("table", m.Name); err != nil {
		return err
	}
	if len(m.Key) < 1 || len(m.Key) > MaxKeyColumns {
		return invalid("primary key has %d columns; it must have 1-%d", len(m.Key), MaxKeyColumns)
	}
	for i, kc := range m.Key {
		if err := checkName("primary-key column", kc.Name); err != nil {
			return err
		}
		if !kc.Type.IsKeyType() {
			return invalid("primary-key column %q has type %v; it must be String, Integer or Binary", kc.Name, kc.Type)
		}
		for _, prev := range m.Key[:i] {
			if prev.Name == kc.Name {
				return invalid("primary-key column %q appears twice", kc.Name)
			}
			if prev.AutoIncrement && kc.AutoIncrement {
				return invalid("primary-key columns %q and %q are both auto-increment; a table may have one (SPEC §14)", prev.Name, kc.Name)
			}
		}
		if kc.AutoIncrement && (i == 0 || kc.Type != TypeInteger) {
			return invalid("primary-key column %q (%v, column %d) cannot be auto-increment: it must be an Integer column other than the first (SPEC §14)", kc.Name, kc.Type, i+1)
		}
	}
	return checkOptions(m.Options)
}

func isKeyName(m *TableMeta, name string) bool {
	for _, kc := range m.Key {
		if kc.Name == name {
			return true
		}
	}
	return false
}

// hasAutoIncrement reports whether m declares an auto-increment column.
func hasAutoIncrement(m *TableMeta) bool {
	for _, kc := range m.Key {
		if kc.AutoIncrement {
			return true
		}
	}
	return false
}

// checkKeyValue checks one key value against its schema column.
func checkKeyValue(kc KeyColumn, v Value, bound bool) *Error {
	if v.typ == typeAutoIncrement {
		if kc.AutoIncrement {
			return Errorf(ErrInvalidPrimaryKey, "primary-key column %q is AutoIncrement, which only a put's or update's key may hold; address an existing row by its real key (SPEC §14)", kc.Name)
		}
		return Errorf(ErrInvalidPrimaryKey, "primary-key column %q is AutoIncrement, but it is not an auto-increment column (SPEC §14)", kc.Name)
	}
	if v.IsInf() {
		if bound {
			return nil
		}
		return Errorf(ErrInvalidPrimaryKey, "primary-key column %q is %#v; InfMin and InfMax are allowed only in range bounds", kc.Name, v)
	}
	if v.typ != kc.Type {
		return Errorf(ErrInvalidPrimaryKey, "primary-key column %q has type %v, the schema says %v", kc.Name, v.typ, kc.Type)
	}
	switch v.typ {
	case TypeString:
		if !utf8.ValidString(v.str) {
			return invalid("primary-key column %q: String is not valid UTF-8", kc.Name)
		}
		fallthrough
	case TypeBinary:
		if len(v.str) > MaxKeyValueSize {
			return invalid("primary-key column %q: %v of %d bytes exceeds the limit of %d bytes", kc.Name, v.typ, len(v.str), MaxKeyValueSize)
		}
	}
	return nil
}

// checkKey applies SPEC §4: same count, names, order and types as the schema.
func checkKey(m *TableMeta, k PrimaryKey, bound bool) *Error { return checkKeyAI(m, k, bound, false) }

// checkKeyAI is checkKey; with ai, the auto-increment column may hold
// AutoIncrement.
func checkKeyAI(m *TableMeta, k PrimaryKey, bound, ai bool) *Error {
	if len(k) != len(m.Key) {
		return Errorf(ErrInvalidPrimaryKey, "key %v has %d columns, the schema has %d", k, len(k), len(m.Key))
	}
	for i, kc := range m.Key {
		if k[i].Name != kc.Name {
			return Errorf(ErrInvalidPrimaryKey, "key column %d is named %q, the schema says %q", i+1, k[i].Name, kc.Name)
		}
		if ai && kc.AutoIncrement && k[i].Value.typ == typeAutoIncrement {
			continue
		}
		if err := checkKeyValue(kc, k[i].Value, bound); err != nil {
			return err
		}
	}
	return nil
}

// checkWriteKey is checkKey of a write's key, where a put or update may
// hold AutoIncrement as the value of the table's auto-increment column.
func checkWriteKey(m *TableMeta, kind WriteKind, k PrimaryKey) *Error {
	return checkKeyAI(m, k, false, kind != WriteDelete)
}

// checkValue checks an attribute value (SPEC §2).
func checkValue(column string, v Value) *Error {
	switch v.typ {
	case TypeString:
		if !utf8.ValidString(v.str) {
			return invalid("column %q: String is not valid UTF-8", column)
		}
		fallthrough
	case TypeBinary:
		if len(v.str) > MaxValueSize {
			return invalid("column %q: %v of %d bytes exceeds the limit of %d bytes", column, v.typ, len(v.str), MaxValueSize)
		}
	case TypeDouble:
		if f := math.Float64frombits(v.num); math.IsNaN(f) || math.IsInf(f, 0) {
			return invalid("column %q: Double %v is not allowed (NaN and ±Inf are refused)", column, f)
		}
	case TypeInteger, TypeBoolean:
	case typeAutoIncrement:
		return invalid("column %q: AutoIncrement is allowed only in a put's or update's key (SPEC §14)", column)
	default:
		return invalid("column %q: value %#v is not a String, Integer, Double, Boolean or Binary", column, v)
	}
	return nil
}

func checkAttrName(m *TableMeta, name string) *Error {
	if err := checkName("column", name); err != nil {
		return err
	}
	if isKeyName(m, name) {
		return invalid("column %q is a primary-key column name; an attribute column may not carry it", name)
	}
	return nil
}

func checkVersion(m *TableMeta, column string, version, now int64) *Error {
	if why := base.CheckVersion(m.Options.TTLSeconds(), m.Options.MaxVersionOffsetSeconds(), version, now); why != "" {
		return invalid("column %q: invalid timestamp: %s", column, why)
	}
	return nil
}

// smallPut is the most columns a PutRow may have for resolvePut to find
// repeated cells by comparing each with those before it.
const smallPut = 16

type cellID struct {
	name    string
	version int64
}

// resolvePut checks a PutRow's columns and gives each its version.
func resolvePut(m *TableMeta, cols []Column, now int64) ([]Column, *Error) {
	if len(cols) > MaxColumnsPerWrite {
		return nil, invalid("the write has %d columns; the limit is %d", len(cols), MaxColumnsPerWrite)
	}
	out := make([]Column, len(cols))
	size := 0
	var seen map[cellID]bool
	for i, c := range cols {
		if err := checkAttrName(m, c.Name); err != nil {
			return nil, err
		}
		if err := checkValue(c.Name, c.Value); err != nil {
			return nil, err
		}
		if c.Version == 0 {
			c.Version = now
		}
		if err := checkVersion(m, c.Name, c.Version, now); err != nil {
			return nil, err
		}
		dup := false
		switch {
		case len(cols) <= smallPut: // a scan of the few before it beats a map
			for j := range out[:i] {
				if out[j].Version == c.Version && out[j].Name == c.Name {
					dup = true
					break
				}
			}
		default:
			if seen == nil {
				seen = make(map[cellID]bool, len(cols))
			}
			id := cellID{c.Name, c.Version}
			dup = seen[id]
			seen[id] = true
		}
		if dup {
			return nil, invalid("column %q version %d is written twice in one PutRow", c.Name, c.Version)
		}
		size += len(c.Name) + c.Value.Size() + 8
		out[i] = c
	}
	if size > MaxWriteSize {
		return nil, invalid("the write is %d bytes; the limit is %d bytes", size, MaxWriteSize)
	}
	return out, nil
}

// resolveChanges checks an UpdateRow's changes and versions its puts.
func resolveChanges(m *TableMeta, changes []Change, now int64) ([]Change, *Error) {
	if len(changes) == 0 {
		return nil, invalid("UpdateRow needs at least one change")
	}
	if len(changes) > MaxColumnsPerWrite {
		return nil, invalid("the write has %d column changes; the limit is %d", len(changes), MaxColumnsPerWrite)
	}
	out := make([]Change, len(changes))
	size := 0
	for i, c := range changes {
		if err := checkAttrName(m, c.Column); err != nil {
			return nil, err
		}
		switch c.Kind {
		case ChangePut:
			if err := checkValue(c.Column, c.Value); err != nil {
				return nil, err
			}
			if c.Version == 0 {
				c.Version = now
			}
			if err := checkVersion(m, c.Column, c.Version, now); err != nil {
				return nil, err
			}
			size += c.Value.Size()
		case ChangeDeleteVersion:
			if c.Version < 0 {
				return nil, invalid("column %q: DeleteVersion of negative version %d", c.Column, c.Version)
			}
		case ChangeDeleteColumn:
		case ChangeIncrement:
			c.Version = now
		default:
			return nil, invalid("column %q: unknown change kind %d", c.Column, c.Kind)
		}
		size += len(c.Column) + 8
		out[i] = c
	}
	if size > MaxWriteSize {
		return nil, invalid("the write is %d bytes; the limit is %d bytes", size, MaxWriteSize)
	}
	return out, nil
}

func checkFilter(m *TableMeta, f Filter, depth int) *Error {
	if depth > 32 {
		return invalid("filter is nested more than 32 levels deep")
	}
	switch f := f.(type) {
	case nil:
		return nil
	case ColumnFilter:
		return checkColumnFilter(m, &f)
	case *ColumnFilter:
		if f == nil {
			return invalid("filter is a nil *ColumnFilter")
		}
		return checkColumnFilter(m, f)
	case CompositeFilter:
		return checkComposite(m, &f, depth)
	case *CompositeFilter:
		if f == nil {
			return invalid("filter is a nil *CompositeFilter")
		}
		return checkComposite(m, f, depth)
	}
	return invalid("filter of type %T is not a tablekit filter", f)
}

func checkColumnFilter(m *TableMeta, f *ColumnFilter) *Error {
	if err := checkAttrName(m, f.Column); err != nil {
		return err
	}
	if f.Op < Equal || f.Op > LessEqual {
		return invalid("filter on column %q: unknown comparison %d", f.Column, f.Op)
	}
	return checkValue(f.Column, f.Value)
}

func checkComposite(m *TableMeta, f *CompositeFilter, depth int) *Error {
	switch f.Op {
	case LogicAnd, LogicOr:
		if len(f.Filters) == 0 {
			return invalid("%v filter needs at least one sub-filter", f.Op)
		}
	case LogicNot:
		if len(f.Filters) != 1 {
			return invalid("NOT filter needs exactly one sub-filter, got %d", len(f.Filters))
		}
	default:
		return invalid("unknown filter combinator %d", f.Op)
	}
	for _, s := range f.Filters {
		if s == nil {
			return invalid("%v filter has a nil sub-filter", f.Op)
		}
		if err := checkFilter(m, s, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func checkCondition(m *TableMeta, c Condition) *Error {
	if c.Row == conflictingRow {
		return invalid("the write's conditions expect the row both to exist and not to exist")
	}
	if c.Row > ExpectNotExist {
		return invalid("unknown row existence expectation %d", c.Row)
	}
	return checkFilter(m, c.Column, 0)
}

// resolveRead turns read options into a ReadSpec.
func resolveRead(m *TableMeta, o *readOptions) (ReadSpec, *Error) {
	var s ReadSpec
	if o.columns != nil {
		// The projection is a set: sorted and without repeats (nor key
		// columns), so that a backend may walk it beside a row's cells,
		// which are sorted by name too (rowmodel.Project does). Columns
		// made its names a sorted set of its own, never changed after: the
		// request shares it unless a key column must go.
		keys := false
		for _, name := range o.columns {
			if err := checkName("column", name); err != nil {
				return s, err
			}
			keys = keys || isKeyName(m, name)
		}
		s.Columns = o.columns
		if keys {
			s.Columns = make([]string, 0, len(o.columns))
			for _, name := range o.columns {
				if !isKeyName(m, name) {
					s.Columns = append(s.Columns, name)
				}
			}
		}
	}
	if o.maxVersions < 0 {
		return s, invalid("MaxVersions %d must be at least 1", o.maxVersions)
	}
	if tr := o.timeRange; tr != nil {
		if tr.Start < 0 || tr.End <= tr.Start {
			return s, invalid("time range [%d, %d) is empty or negative", tr.Start, tr.End)
		}
		t := *tr
		s.TimeRange = &t
	}
	switch {
	case o.maxVersions > 0:
		s.MaxVersions = o.maxVersions
	case s.TimeRange != nil:
		s.MaxVersions = math.MaxInt32
	default:
		s.MaxVersions = 1
	}
	if err := checkFilter(m, o.filter, 0); err != nil {
		return s, err
	}
	s.Filter = o.filter
	return s, nil
}

func fmtLimit(what string, n, limit int) *Error {
	return invalid("%s has %d entries; it must have 1-%d", what, n, limit)
}
