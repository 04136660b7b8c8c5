package base

import "errors"

// ErrStaleMeta: the request's table metadata (its Incarnation or
// Generation) is older than the store's; nothing was written. It is the one
// error by which a backend tells the Client so; adapters reach it as
// driver.ErrStaleMeta, and the Client retries on it.
var ErrStaleMeta = errors.New("the table was re-created or its options changed since the request's metadata was read")
