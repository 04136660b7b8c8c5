package main

// tablekit ui: a web console over the portable Client API (issue 29).
//
// The pages are server-rendered with html/template from files embedded in
// the binary (ui/), with a little plain JavaScript (ui/static/app.js) and
// no build step. The console reuses the command line's pieces: its URL
// rules (openStore), key and value syntax (parseKey, formatKey,
// formatValue, parseValue), --filter language (parseFilter), prefix ranges
// (rangeFlags.resolve) and JSON lines (exportTable, the import command).
//
// Safety: read-only unless --write; on loopback only, unless --listen
// names another address, which then needs the access token the command
// prints (a cookie once visited); every POST carries the page's CSRF token
// and, when the browser sends one, a same-origin Origin; bodies and request
// times are bounded; a page holds at most one page of rows; the backend
// URL is shown without user information or query (driver.ShowURL).

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/backend/driver"
)

//go:embed ui
var uiFiles embed.FS

// Limits of the console's requests.
const (
	uiFormLimit    = 1 << 20   // bytes of a form POST
	uiImportLimit  = 256 << 20 // bytes of an uploaded import
	uiRequestTime  = 30 * time.Second
	uiDefaultPage  = 25
	uiMaxPage      = 1000
	uiShownColumns = 8  // attribute columns in the rows grid before they collapse
	uiTruncate     = 64 // characters of a value shown in the rows grid
	uiTokenCookie  = "tablekit_ui_token"
	uiDefaultAddr  = "127.0.0.1:7733"
	uiEnvToken     = "TABLEKIT_UI_TOKEN"
)

const uiHelp = `
Open the address printed. The console lists the tables, pages through rows
(key prefix per key column, the --filter language of scan, either direction,
a column chooser), shows a row with every version, follows a table's change
feed live, and exports and imports JSON lines. It is read-only unless
--write is given; every change is then conditional on the row as shown.

It listens on loopback only. --listen ADDR (e.g. 0.0.0.0:7733) serves other
hosts too; every request must then carry the access token printed (or
$` + uiEnvToken + `), which the printed address holds.
`

func init() {
	commands = append(commands, &command{name: "ui", args: "[URL]", summary: "serve a web console of the store on loopback (--write: allow changes)", nargs: [2]int{0, 1}, flags: uiCmd, help: uiHelp})
}

func uiCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	write := fs.Bool("write", false, "allow changes: create, drop, edit, delete, import")
	listen := fs.String("listen", "", "serve on `ADDR` instead of "+uiDefaultAddr+"; an address other than loopback requires the access token")
	return func(ctx context.Context, args []string) error {
		if len(args) == 1 {
			e.url = args[0]
		}
		addr := *listen
		if addr == "" {
			addr = uiDefaultAddr
		}
		loop, err := loopbackAddr(addr)
		if err != nil {
			return usagef("--listen %q: %v", addr, err)
		}
		token := ""
		if !loop {
			if token = os.Getenv(uiEnvToken); token == "" {
				token = randomHex(16)
			}
		}
		return e.withClient(ctx, func(db *tablekit.Client) error {
			c, err := newConsole(db, e, consoleConfig{write: *write, token: token})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil && *listen == "" && errors.Is(err, syscall.EADDRINUSE) {
				ln, err = net.Listen("tcp", "127.0.0.1:0") // the default port is taken: any free one
			}
			if err != nil {
				return err
			}
			open := "http://" + openAddr(ln.Addr()) + "/"
			if token != "" {
				open += "?token=" + token
			}
			mode := "read-only (start with --write to allow changes)"
			if *write {
				mode = "read-write"
			}
			fmt.Fprintf(e.stdout, "tablekit ui: %s, %s\nopen %s\n", driver.ShowURL(mustParseURL(e.url)), mode, open)
			return c.serve(ctx, ln)
		})
	}
}

// openAddr is the address to open for one that listens on a: on every
// interface (0.0.0.0, ::), the host's name.
func openAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	return net.JoinHostPort(host, strconv.Itoa(ta.Port))
}

func mustParseURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		return &url.URL{Scheme: "invalid"}
	}
	return u
}

// loopbackAddr reports whether addr (host:port) only listens on loopback.
func loopbackAddr(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return hex.EncodeToString(b)
}

// consoleConfig is what newConsole needs besides the client.
type consoleConfig struct {
	write bool
	token string // "": loopback clients only
}

// console is the web console's server.
type console struct {
	db    *tablekit.Client
	e     *env
	cfg   consoleConfig
	csrf  string
	url   string // the backend as shown: no user information, no query
	pages map[string]*template.Template
	mux   *http.ServeMux

	jobsMu sync.Mutex
	jobs   map[string]*uiJob
}

func newConsole(db *tablekit.Client, e *env, cfg consoleConfig) (*console, error) {
	c := &console{db: db, e: e, cfg: cfg, csrf: randomHex(16), url: driver.ShowURL(mustParseURL(e.url)), jobs: map[string]*uiJob{}}
	if err := c.parseTemplates(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

func (c *console) parseTemplates() error {
	funcs := template.FuncMap{"plural": plural}
	base, err := template.New("").Funcs(funcs).ParseFS(uiFiles, "ui/layout.html")
	if err != nil {
		return err
	}
	names, err := fs.Glob(uiFiles, "ui/page_*.html")
	if err != nil {
		return err
	}
	c.pages = map[string]*template.Template{}
	for _, n := range names {
		t, err := template.Must(base.Clone()).ParseFS(uiFiles, n)
		if err != nil {
			return err
		}
		c.pages[strings.TrimSuffix(strings.TrimPrefix(n, "ui/page_"), ".html")] = t
	}
	return nil
}

func (c *console) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(uiFiles, "ui/static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", c.tablesPage)
	m.HandleFunc("POST /tables/create", c.createTable)
	m.HandleFunc("POST /tables/drop", c.dropTable)
	m.HandleFunc("GET /t/{table}", c.rowsPage)
	m.HandleFunc("GET /t/{table}/cell", c.cellValue)
	m.HandleFunc("POST /t/{table}/put", c.putRow)
	m.HandleFunc("GET /t/{table}/row", c.rowPage)
	m.HandleFunc("POST /t/{table}/row", c.editRow)
	m.HandleFunc("GET /t/{table}/feed", c.feedPage)
	m.HandleFunc("GET /t/{table}/feed/events", c.feedEvents)
	m.HandleFunc("POST /t/{table}/feed", c.setFeed)
	m.HandleFunc("GET /t/{table}/export", c.exportTable)
	m.HandleFunc("POST /import", c.importRows)
	m.HandleFunc("GET /jobs/{id}", c.jobPage)
	m.HandleFunc("GET /jobs/{id}/status", c.jobStatus)
	c.mux = m
}

// serve serves on ln until ctx ends.
func (c *console) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           c,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute, // a whole request, upload included
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}

// ServeHTTP checks every request (who may ask, CSRF on POST, sizes and
// times), sets the security headers, and routes it.
func (c *console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if msg := c.refuse(w, r); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost {
		limit := int64(uiFormLimit)
		if r.URL.Path == "/import" {
			limit = uiImportLimit
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if r.URL.Path != "/import" {
			if err := r.ParseForm(); err != nil {
				var mb *http.MaxBytesError
				if errors.As(err, &mb) {
					http.Error(w, fmt.Sprintf("tablekit ui: a form is at most %d bytes: nothing was done", limit), http.StatusRequestEntityTooLarge)
					return
				}
				http.Error(w, "tablekit ui: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		if msg := c.checkPost(r); msg != "" {
			http.Error(w, msg, http.StatusForbidden)
			return
		}
	}
	if !strings.HasSuffix(r.URL.Path, "/events") && !strings.HasSuffix(r.URL.Path, "/export") {
		ctx, cancel := context.WithTimeout(r.Context(), uiRequestTime)
		defer cancel()
		r = r.WithContext(ctx)
	}
	c.mux.ServeHTTP(w, r)
}

// refuse says why r may not be served ("" when it may): without a token
// only loopback clients naming a loopback host (no DNS rebinding); with
// one, every request carries it (query, once, then a cookie).
func (c *console) refuse(w http.ResponseWriter, r *http.Request) string {
	if c.cfg.token == "" {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return "tablekit ui serves loopback clients only: start it with --listen to serve others (an access token is then required)"
		}
		if !loopbackHost(r.Host) {
			return "tablekit ui: the Host header must name loopback (localhost, 127.0.0.1 or [::1])"
		}
		return ""
	}
	got := r.URL.Query().Get("token")
	if got == "" {
		if ck, err := r.Cookie(uiTokenCookie); err == nil {
			got = ck.Value
		}
	} else if subtle.ConstantTimeCompare([]byte(got), []byte(c.cfg.token)) == 1 {
		http.SetCookie(w, &http.Cookie{Name: uiTokenCookie, Value: got, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.cfg.token)) != 1 {
		return "tablekit ui: this address needs the access token that tablekit ui printed (open the address it printed)"
	}
	return ""
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkPost refuses a POST without the page's CSRF token (a form field or
// the X-CSRF-Token header) or from another origin, and every write of a
// read-only console.
func (c *console) checkPost(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		ou, err := url.Parse(o)
		if err != nil || ou.Host != r.Host {
			return "tablekit ui: refused a POST from another origin (" + o + ")"
		}
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		if r.URL.Path == "/import" {
			got = r.URL.Query().Get("csrf") // multipart: the form is read later
		} else {
			got = r.PostFormValue("csrf")
		}
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.csrf)) != 1 {
		return "tablekit ui: refused a POST without this page's CSRF token (reload the page and try again)"
	}
	if !c.cfg.write {
		return "tablekit ui is read-only: start it with --write to change data"
	}
	return ""
}
