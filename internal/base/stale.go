// Package stale holds the one error by which a backend tells the Client
// that a request was built from table metadata older than the store's. It
// is its own package so that the root package (which retries on it) and
// the packages adapters import (which return it) share it without a cycle;
// adapters reach it as driver.ErrStaleMeta.
package base

import "errors"

// ErrMeta: the request's table metadata (its Incarnation or Generation) is
// older than the store's; nothing was written.
var ErrStaleMeta = errors.New("the table was re-created or its options changed since the request's metadata was read")
