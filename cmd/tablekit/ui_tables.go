package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit"
)

// page is what every template gets: the layout's fields and the page's own.
type page struct {
	Title  string
	Store  string // the backend URL as shown (no user information, no query)
	CSRF   string
	Write  bool
	Table  string // the table the page is about, if any
	Error  string // a message shown above the page
	Notice string
	Body   any
}

// render writes template name with body; status 0 is 200.
func (c *console) render(w http.ResponseWriter, status int, name, title, table string, body any, msg string) {
	p := page{Title: title, Store: c.url, CSRF: c.csrf, Write: c.cfg.write, Table: table, Error: msg, Body: body}
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "page", p); err != nil {
		http.Error(w, "tablekit ui: rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if status != 0 {
		w.WriteHeader(status)
	}
	w.Write(buf.Bytes())
}

// fail shows err on the error page with the status it calls for.
func (c *console) fail(w http.ResponseWriter, table string, err error) {
	c.render(w, errStatus(err), "error", "Error", table, nil, err.Error())
}

func errStatus(err error) int {
	var ue *usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, tablekit.ErrInvalidArgument):
		return http.StatusBadRequest
	case errors.Is(err, tablekit.ErrTableNotFound):
		return http.StatusNotFound
	case errors.Is(err, tablekit.ErrConditionFailed), errors.Is(err, tablekit.ErrAlreadyExists):
		return http.StatusConflict
	case errors.Is(err, tablekit.ErrUnimplemented):
		return http.StatusNotImplemented
	}
	return http.StatusInternalServerError
}

// seeOther redirects a POST to the page that shows its result.
func seeOther(w http.ResponseWriter, r *http.Request, path string, q url.Values) {
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// tableInfo is one table of the tables page.
type tableInfo struct {
	Name     string
	Key      string // the schema as create --key takes it
	TTL      string
	Versions int
	Offset   string
	Feed     string
	Indexes  []indexInfo // SPEC §16
	Err      string
}

type tablesBody struct {
	Tables []tableInfo
	Caps   []capInfo
}

type capInfo struct {
	Name string
	On   bool
}

func capsOf(c tablekit.Capabilities) []capInfo {
	return []capInfo{
		{"batch read", c.BatchRead}, {"batch write", c.BatchWrite}, {"lending scan", c.LendingScan},
		{"atomic write", c.AtomicWrite}, {"auto-increment", c.AutoIncrement}, {"change feed", c.ChangeFeed},
		{"feed at creation", c.CreateWithFeed}, {"indexed write", c.IndexedWrite},
	}
}

// maxTablesListed bounds the tables described on the tables page.
const maxTablesListed = 500

func (c *console) tablesPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	names, err := c.db.ListTables(ctx)
	if err != nil {
		c.fail(w, "", err)
		return
	}
	caps := c.db.Capabilities()
	body := tablesBody{Caps: capsOf(caps)}
	msg := ""
	if len(names) > maxTablesListed {
		msg = fmt.Sprintf("%d tables: the first %d are listed", len(names), maxTablesListed)
		names = names[:maxTablesListed]
	}
	for _, n := range names {
		ti := tableInfo{Name: n, Feed: "—"}
		m, err := c.db.DescribeTable(ctx, n)
		if err != nil {
			ti.Err = err.Error()
			body.Tables = append(body.Tables, ti)
			continue
		}
		ti.Key = schemaString(m.Key)
		ti.Indexes = indexesOf(&m)
		ti.TTL = "never"
		if m.Options.TTL != tablekit.NoExpiry && m.Options.TTL != 0 {
			ti.TTL = m.Options.TTL.String()
		}
		ti.Versions = m.Options.MaxVersions
		ti.Offset = m.Options.MaxVersionOffset.String()
		if caps.ChangeFeed {
			if st, err := c.db.Table(n).ChangeFeed(ctx); err == nil {
				ti.Feed = "off"
				if st.Enabled {
					ti.Feed = "on, " + plural(int64(len(st.Shards)), "shard") + ", retention " + st.Retention.String()
				}
			}
		}
		body.Tables = append(body.Tables, ti)
	}
	c.render(w, 0, "tables", "Tables", "", body, msg)
}

// createTable creates a table from the form: name, key (create --key's
// syntax), options in seconds, indexes (create --index's syntax, separated
// by spaces) and an optional change feed.
func (c *console) createTable(w http.ResponseWriter, r *http.Request) {
	name := r.PostFormValue("name")
	err := func() error {
		ks, err := parseSchema(r.PostFormValue("key"))
		if err != nil {
			return usagef("key: %v", err)
		}
		opts, err := formOptions(r)
		if err != nil {
			return err
		}
		var indexes []tablekit.IndexSpec
		for f := range strings.FieldsSeq(r.PostFormValue("indexes")) {
			ix, err := parseIndex(f)
			if err != nil {
				return usagef("indexes: %v", err)
			}
			indexes = append(indexes, ix)
		}
		if err := c.db.CreateTable(r.Context(), tablekit.TableMeta{Name: name, Key: ks, Options: opts, Indexes: indexes}); err != nil {
			return err
		}
		if r.PostFormValue("feed") != "" {
			if _, err := c.db.Table(name).EnableChangeFeed(r.Context(), 0); err != nil {
				return fmt.Errorf("table %q created, but its change feed was not enabled: %w", name, err)
			}
		}
		return nil
	}()
	if err != nil {
		c.fail(w, "", err)
		return
	}
	seeOther(w, r, "/t/"+url.PathEscape(name), nil)
}

// formOptions reads the ttl, versions and offset fields (seconds; empty:
// the default).
func formOptions(r *http.Request) (tablekit.TableOptions, error) {
	var o tablekit.TableOptions
	num := func(field string) (int64, bool, error) {
		s := strings.TrimSpace(r.PostFormValue(field))
		if s == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, false, usagef("%s: %q is not a whole number", field, s)
		}
		return n, true, nil
	}
	if n, ok, err := num("ttl"); err != nil {
		return o, err
	} else if ok {
		o.TTL = time.Duration(n) * time.Second
	}
	if n, ok, err := num("versions"); err != nil {
		return o, err
	} else if ok {
		o.MaxVersions = int(n)
	}
	if n, ok, err := num("offset"); err != nil {
		return o, err
	} else if ok {
		o.MaxVersionOffset = time.Duration(n) * time.Second
	}
	return o, nil
}

// dropTable deletes a table once its name is typed again.
func (c *console) dropTable(w http.ResponseWriter, r *http.Request) {
	name, confirm := r.PostFormValue("name"), r.PostFormValue("confirm")
	if name == "" || confirm != name {
		c.fail(w, name, usagef("to drop table %q, type its name in the box (got %q): nothing was dropped", name, confirm))
		return
	}
	if err := c.db.DeleteTable(r.Context(), name); err != nil {
		c.fail(w, name, err)
		return
	}
	seeOther(w, r, "/", nil)
}
