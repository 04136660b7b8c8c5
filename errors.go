package tablekit

import (
	"context"
	"errors"
	"fmt"
)

// The portable errors of SPEC §12, for [errors.Is]; only ErrThrottled and
// ErrUnavailable say a retry may succeed.
var (
	ErrInvalidArgument  = errors.New("invalid argument")  // breaks SPEC.md or a backend's limit
	ErrTableNotFound    = errors.New("table not found")   // no table of that name
	ErrAlreadyExists    = errors.New("already exists")    // CreateTable of an existing name
	ErrConditionFailed  = errors.New("condition failed")  // nothing was written
	ErrPermissionDenied = errors.New("permission denied") // credentials or call refused
	ErrThrottled        = errors.New("throttled")         // load shed: retry later, with backoff
	ErrUnavailable      = errors.New("unavailable")       // transient; the call may have applied
	ErrUnimplemented    = errors.New("unimplemented")     // the backend does not support it
	ErrClosed           = errors.New("client is closed")  // the Client was closed before the call

	// ErrInvalidPrimaryKey is the ErrInvalidArgument of a key that does not
	// match the table's schema (Tablestore's OTSInvalidPK).
	ErrInvalidPrimaryKey = fmt.Errorf("%w: primary key does not match the schema", ErrInvalidArgument)
)

// Error is each call's error but a context's: a portable Code, the native
// Err.
type Error struct {
	Op    string // operation, e.g. "PutRow"
	Table string // table name, if the operation has one
	Code  error  // a portable sentinel such as ErrInvalidArgument
	Msg   string // what was wrong: the column, key or limit
	Err   error  // the underlying (often native) error, may be nil
}

// Error formats e as `tablekit: Op table "T": code: msg: native error`.
func (e *Error) Error() string {
	s := "tablekit: "
	if e.Op != "" {
		s += e.Op + " "
	}
	if e.Table != "" {
		s += fmt.Sprintf("table %q: ", e.Table)
	}
	code := "error"
	if e.Code != nil {
		code = e.Code.Error()
		if errors.Is(e.Code, ErrInvalidPrimaryKey) {
			code = ErrInvalidArgument.Error()
		}
	}
	s += code
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is (or is wrapped by) e's portable code.
func (e *Error) Is(target error) bool {
	return e.Code != nil && (e.Code == target || errors.Is(e.Code, target))
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// WrapError returns an *Error with the given code that wraps a native error.
func WrapError(code error, native error, format string, args ...any) *Error {
	e := &Error{Code: code, Err: native}
	if format != "" {
		e.Msg = fmt.Sprintf(format, args...)
	}
	return e
}

// annotate gives err the operation and table it belongs to. Context errors
// are returned unchanged, so errors.Is(err, context.Canceled) holds and
// err == ctx.Err() as well.
func annotate(err error, op, table string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		var te *Error
		if !errors.As(err, &te) {
			return err
		}
	}
	var te *Error
	if errors.As(err, &te) {
		if te.Op == "" || te.Table == "" {
			c := *te
			if c.Op == "" {
				c.Op = op
			}
			if c.Table == "" {
				c.Table = table
			}
			return &c
		}
		return err
	}
	return &Error{Op: op, Table: table, Err: err}
}
