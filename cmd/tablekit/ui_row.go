package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tablekit/tablekit"
)

// rowPageData is the row page's body.
type rowPageData struct {
	Table   string
	Key     string
	Found   bool
	Keys    []keyView
	Columns []columnView
	Seen    string // the checksum of the row as shown: every edit is conditional on it
	Back    string
	TTL     string
}

type keyView struct {
	Name string
	cellView
}

type columnView struct {
	Name     string
	Edit     string // the latest value in the command line's syntax, for the edit box
	Versions []versionView
}

type versionView struct {
	Version int64
	Time    string // UTC, ms
	Expires string // "" when the table's TTL is never
	cellView
}

// readRow reads every visible version of the row at key.
func (c *console) readRow(ctx context.Context, m *tablekit.TableMeta, k tablekit.PrimaryKey) (tablekit.Row, bool, error) {
	return c.db.Table(m.Name).GetRow(ctx, k, tablekit.MaxVersions(max(m.Options.MaxVersions, 1)))
}

// rowSeen is the checksum of row as read (key, every cell and version),
// the row page's "as shown" that every edit is conditional on.
func rowSeen(row tablekit.Row, found bool) string {
	if !found {
		return "absent"
	}
	sum, _ := rowChecksum(&row, nil)
	return strconv.FormatUint(sum, 16)
}

func (c *console) rowPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	m, k, err := c.tableKey(r, r.URL.Query().Get("key"))
	if err != nil {
		c.fail(w, name, err)
		return
	}
	c.showRow(w, r.Context(), m, k, 0, "")
}

// tableKey describes the request's table and parses key against it.
func (c *console) tableKey(r *http.Request, key string) (*tablekit.TableMeta, tablekit.PrimaryKey, error) {
	m, err := c.db.DescribeTable(r.Context(), r.PathValue("table"))
	if err != nil {
		return nil, nil, err
	}
	k, err := parseKey(&m, strings.TrimSpace(key), false, tablekit.Value{})
	if err != nil {
		return nil, nil, usagef("key: %v", err)
	}
	return &m, k, nil
}

// showRow renders the row page of k as it is now, with msg above it.
func (c *console) showRow(w http.ResponseWriter, ctx context.Context, m *tablekit.TableMeta, k tablekit.PrimaryKey, status int, msg string) {
	row, found, err := c.readRow(ctx, m, k)
	if err != nil {
		c.fail(w, m.Name, err)
		return
	}
	key := formatKey(k)
	d := rowPageData{Table: m.Name, Key: key, Found: found, Seen: rowSeen(row, found), Back: "/t/" + url.PathEscape(m.Name), TTL: "never"}
	ttl := m.Options.TTL
	if ttl > 0 {
		d.TTL = ttl.String()
	}
	for _, p := range k {
		d.Keys = append(d.Keys, keyView{Name: p.Name, cellView: showKeyValue(p.Value, 0)})
	}
	for i, col := range row.Columns {
		if i == 0 || row.Columns[i-1].Name != col.Name {
			d.Columns = append(d.Columns, columnView{Name: col.Name, Edit: formatValue(col.Value)})
		}
		vv := versionView{Version: col.Version, Time: tablekit.VersionTime(col.Version).UTC().Format("2006-01-02 15:04:05.000Z07:00"), cellView: showValue(col.Value, 0)}
		if ttl > 0 {
			// Visible while v_s + TTL > now_s (SPEC §6): gone at the second v_s + TTL.
			exp := time.Unix(col.Version/1000+int64(ttl/time.Second), 0).UTC()
			vv.Expires = exp.Format("2006-01-02 15:04:05Z07:00")
		}
		cv := &d.Columns[len(d.Columns)-1]
		cv.Versions = append(cv.Versions, vv)
	}
	title := key
	if !found {
		title += " (no such row)"
	}
	c.render(w, status, "row", title, m.Name, d, msg)
}

// errConflict is an edit refused because the row changed since its page
// was shown.
var errConflict = errors.New("the row changed since this page showed it")

// editRow applies one edit of the row page, conditional on the row being
// as the page showed it (seen): the row is read again and compared, and
// the write itself carries a condition on every column's newest value as
// read (the part the store checks atomically), so that two people editing
// one row do not overwrite each other.
func (c *console) editRow(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	m, k, err := c.tableKey(r, r.PostFormValue("key"))
	if err != nil {
		c.fail(w, name, err)
		return
	}
	op, col := r.PostFormValue("op"), r.PostFormValue("column")
	err = c.applyEdit(r.Context(), m, k, op, col, r)
	switch {
	case errors.Is(err, errConflict) || errors.Is(err, tablekit.ErrConditionFailed):
		c.showRow(w, r.Context(), m, k, http.StatusConflict, fmt.Sprintf(
			"Conflict: row %s of table %q changed since this page was loaded (someone else wrote it): nothing was written. The page now shows the row as it is; check it and try again.", formatKey(k), m.Name))
	case err != nil:
		c.showRow(w, r.Context(), m, k, errStatus(err), err.Error())
	case op == "delete_row":
		seeOther(w, r, "/t/"+url.PathEscape(m.Name), nil)
	default:
		seeOther(w, r, "/t/"+url.PathEscape(m.Name)+"/row", url.Values{"key": {formatKey(k)}})
	}
}

// maxGuardColumns bounds the columns an edit's condition names.
const maxGuardColumns = 32

func (c *console) applyEdit(ctx context.Context, m *tablekit.TableMeta, k tablekit.PrimaryKey, op, col string, r *http.Request) error {
	row, found, err := c.readRow(ctx, m, k)
	if err != nil {
		return err
	}
	if rowSeen(row, found) != r.PostFormValue("seen") {
		return errConflict
	}
	// What the store checks with the write: the row exists (unless it did
	// not) and every column's newest value is the one read, the edited
	// column's first.
	opts := []tablekit.WriteOption{tablekit.ExpectNotExist}
	if found {
		opts = []tablekit.WriteOption{tablekit.ExpectExist}
		var guard []tablekit.Filter
		add := func(name string) {
			if v, ok := row.Get(name); ok && len(guard) < maxGuardColumns {
				guard = append(guard, tablekit.SingleColumnValue(name, tablekit.Equal, v).Required())
			}
		}
		add(col)
		for i, cl := range row.Columns {
			if cl.Name != col && (i == 0 || row.Columns[i-1].Name != cl.Name) {
				add(cl.Name)
			}
		}
		switch len(guard) {
		case 0:
		case 1:
			opts = append(opts, tablekit.IfMatch(guard[0]))
		default:
			opts = append(opts, tablekit.IfMatch(tablekit.And(guard...)))
		}
	}
	t := c.db.Table(m.Name)
	switch op {
	case "put":
		if col == "" {
			return usagef("column: give the column's name")
		}
		v, err := parseValue(strings.TrimSpace(r.PostFormValue("value")))
		if err != nil {
			return usagef("value of column %q: %v", col, err)
		}
		change := tablekit.Put(col, v)
		if s := strings.TrimSpace(r.PostFormValue("version")); s != "" {
			ver, err := parseTime(s)
			if err != nil {
				return usagef("version of column %q: %v", col, err)
			}
			change = tablekit.PutAt(col, v, ver)
		}
		_, err = t.UpdateRow(ctx, k, []tablekit.Change{change}, opts...)
		return err
	case "delete_version":
		ver, err := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
		if err != nil {
			return usagef("version %q of column %q: want milliseconds", r.PostFormValue("version"), col)
		}
		_, err = t.UpdateRow(ctx, k, []tablekit.Change{tablekit.DeleteVersion(col, ver)}, opts...)
		return err
	case "delete_column":
		_, err = t.UpdateRow(ctx, k, []tablekit.Change{tablekit.DeleteColumn(col)}, opts...)
		return err
	case "delete_row":
		return t.DeleteRow(ctx, k, opts...)
	}
	return usagef("unknown edit %q: want put, delete_version, delete_column or delete_row", op)
}
