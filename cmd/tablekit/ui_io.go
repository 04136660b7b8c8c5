package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// exportTable downloads a table as export writes it (JSON lines, every
// version); the browser shows the download's progress.
func (c *console) exportTable(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	m, err := c.db.DescribeTable(r.Context(), name)
	if err != nil {
		c.fail(w, name, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", `attachment; filename="`+url.PathEscape(name)+`.jsonl"`)
	if err := exportTable(r.Context(), c.db, &m, w); err != nil {
		// The status is sent: end the file with a line that is no row, so
		// that import refuses it rather than taking a cut file for whole.
		b, _ := json.Marshal(map[string]string{"export_error": err.Error()})
		w.Write(append(append([]byte("\n"), b...), '\n'))
	}
}

// uiJob is an import running in the background, watched by its page.
type uiJob struct {
	ID     string
	Table  string
	Total  int64 // lines of the input
	rows   atomic.Int64
	mu     sync.Mutex
	done   bool
	err    string
	output string
}

type jobStatus struct {
	Table  string `json:"table"`
	Rows   int64  `json:"rows"`
	Total  int64  `json:"total"`
	Done   bool   `json:"done"`
	Error  string `json:"error,omitempty"`
	Output string `json:"output,omitempty"`
}

func (j *uiJob) status() jobStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	return jobStatus{Table: j.Table, Rows: j.rows.Load(), Total: j.Total, Done: j.done, Error: j.err, Output: j.output}
}

// importRows takes an uploaded file of JSON lines (export's, or plain
// objects for the table named) and runs the import command on it in the
// background: the same checks (every line before the first write), the
// same messages; its page shows a progress bar.
func (c *console) importRows(w http.ResponseWriter, r *http.Request) {
	table := strings.TrimSpace(r.URL.Query().Get("table"))
	err := func() error {
		f, _, err := r.FormFile("file")
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				return usagef("the file is larger than %d MiB: import it with tablekit import", uiImportLimit>>20)
			}
			return usagef("file: %v", err)
		}
		defer f.Close()
		tmp, err := os.CreateTemp("", "tablekit-ui-import-*.jsonl")
		if err != nil {
			return err
		}
		_, err = io.Copy(tmp, f)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
		lines, err := countLines(tmp.Name())
		if err != nil {
			os.Remove(tmp.Name())
			return err
		}
		j := &uiJob{ID: randomHex(8), Table: table, Total: lines}
		c.addJob(j)
		go c.runImport(j, tmp.Name())
		seeOther(w, r, "/jobs/"+j.ID, nil)
		return nil
	}()
	if err != nil {
		c.fail(w, table, err)
	}
}

// maxJobs bounds the finished imports the console remembers.
const maxJobs = 100

func (c *console) addJob(j *uiJob) {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	for id, old := range c.jobs {
		if len(c.jobs) < maxJobs {
			break
		}
		if old.status().Done {
			delete(c.jobs, id)
		}
	}
	c.jobs[j.ID] = j
}

func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	br := bufio.NewReaderSize(f, 64<<10)
	buf := make([]byte, 64<<10)
	for {
		k, err := br.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// runImport runs "tablekit import -i PATH [TABLE]" against the console's
// client, at most an hour.
func (c *console) runImport(j *uiJob, path string) {
	defer os.Remove(path)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	args := []string{"-i", path}
	if j.Table != "" {
		args = append(args, j.Table)
	}
	var out bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, url: c.e.url, client: c.db,
		argv: append([]string{"tablekit", "import"}, args...), imported: func(n int64) { j.rows.Store(n) }}
	err := runCommand(ctx, e, lookup("import"), args)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done = true
	j.output = strings.TrimSpace(out.String())
	if err != nil {
		j.err = err.Error()
	}
}

func (c *console) job(r *http.Request) *uiJob {
	c.jobsMu.Lock()
	defer c.jobsMu.Unlock()
	return c.jobs[r.PathValue("id")]
}

func (c *console) jobPage(w http.ResponseWriter, r *http.Request) {
	j := c.job(r)
	if j == nil {
		http.NotFound(w, r)
		return
	}
	c.render(w, 0, "job", "Import", j.Table, struct {
		ID     string
		Status jobStatus
	}{j.ID, j.status()}, "")
}

func (c *console) jobStatus(w http.ResponseWriter, r *http.Request) {
	j := c.job(r)
	if j == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(j.status())
}
