package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tablekit/tablekit"
)

// tail prints a table's change feed (SPEC §15) as JSON lines, one per
// record:
//
//	{"shard":"…","checkpoint":"…","kind":"put","key":{"id":{"s":"a"}},
//	 "commit_time":"2026-11-26T09:00:00.123Z",
//	 "changes":[{"op":"put","column":"n","version":1700000000000,"value":{"i":1}},
//	            {"op":"delete_version","column":"x","version":17},
//	            {"op":"delete_column","column":"y"}]}
//
// With --checkpoint FILE it starts where the last run stopped (the file
// holds the position in every shard, as JSON) and keeps the file up to
// date; a record printed just before an interruption may be printed again
// (at least once).

const tailHelp = `
The change feed must be enabled on the table: "tablekit feed TABLE on"
(or tail --enable). Without --follow, tail prints the records committed
so far and exits; with it, it waits for more until interrupted.`

// feedLine is one record as tail prints it.
type feedLine struct {
	Shard      string               `json:"shard"`
	Checkpoint string               `json:"checkpoint"`
	Kind       string               `json:"kind"`
	Key        map[string]jsonValue `json:"key"`
	CommitTime string               `json:"commit_time"`
	Changes    []feedChange         `json:"changes,omitempty"`
}

type feedChange struct {
	Op      string     `json:"op"`
	Column  string     `json:"column"`
	Version int64      `json:"version,omitempty"`
	Value   *jsonValue `json:"value,omitempty"`
}

var kindNames = map[tablekit.WriteKind]string{tablekit.WritePut: "put", tablekit.WriteUpdate: "update", tablekit.WriteDelete: "delete"}

func toFeedLine(r tablekit.ChangeRecord) feedLine {
	l := feedLine{Shard: r.Shard, Checkpoint: string(r.Checkpoint), Kind: kindNames[r.Kind], Key: keyJSON(r.Key),
		CommitTime: r.CommitTime.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
	for _, c := range r.Changes {
		fc := feedChange{Column: c.Column, Version: c.Version}
		switch c.Kind {
		case tablekit.ChangePut:
			v := toJSONValue(c.Value)
			fc.Op, fc.Value = "put", &v
		case tablekit.ChangeDeleteVersion:
			fc.Op = "delete_version"
		case tablekit.ChangeDeleteColumn:
			fc.Op, fc.Version = "delete_column", 0
		}
		l.Changes = append(l.Changes, fc)
	}
	return l
}

// position is a feed position kept in a file (see tail and copy --follow).
type position struct {
	path string
	mu   sync.Mutex
	pos  tablekit.FeedPosition
}

func loadPosition(path string) (*position, error) {
	p := &position{path: path, pos: tablekit.FeedPosition{}}
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &p.pos); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %v", path, err)
	}
	return p, nil
}

func (p *position) set(r tablekit.ChangeRecord) {
	p.mu.Lock()
	p.pos[r.Shard] = r.Checkpoint
	p.mu.Unlock()
}

func (p *position) snapshot() tablekit.FeedPosition {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(tablekit.FeedPosition, len(p.pos))
	for k, v := range p.pos {
		out[k] = v
	}
	return out
}

// save writes the file atomically (a new file, synced, renamed).
func (p *position) save() error {
	if p.path == "" {
		return nil
	}
	b, err := json.Marshal(p.snapshot())
	if err != nil {
		return err
	}
	return writeAtomic(p.path, append(b, '\n'))
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

func tailCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	cpPath := fs.String("checkpoint", "", "position file: tail run again with it goes on where it stopped")
	follow := fs.Bool("follow", false, "wait for new records until interrupted")
	fs.BoolVar(follow, "f", false, "short for --follow")
	enable := fs.Bool("enable", false, "enable the table's change feed first if it is not")
	return func(ctx context.Context, args []string) error {
		if len(args) == 2 {
			e.url, args = args[0], args[1:]
		}
		pos, err := loadPosition(*cpPath)
		if err != nil {
			return err
		}
		return e.withClient(ctx, func(db *tablekit.Client) error {
			t := db.Table(args[0])
			st, err := t.ChangeFeed(ctx)
			if err != nil {
				return err
			}
			if !st.Enabled && *enable {
				if _, err := t.EnableChangeFeed(ctx, 0); err != nil {
					return err
				}
			} else if !st.Enabled && len(st.Shards) == 0 {
				return fmt.Errorf("table %q has no change feed: enable it with \"tablekit feed %s on\" or tail --enable", args[0], args[0])
			}
			w := bufio.NewWriter(e.stdout)
			var last time.Time
			err = t.FollowChangeFeed(ctx, pos.snapshot(), tablekit.FollowOptions{Parallelism: 1, UntilCaughtUp: !*follow}, func(r tablekit.ChangeRecord) error {
				b, err := json.Marshal(toFeedLine(r))
				if err != nil {
					return err
				}
				w.Write(append(b, '\n'))
				pos.set(r)
				if time.Since(last) > 200*time.Millisecond {
					last = time.Now()
					if err := w.Flush(); err != nil {
						return err
					}
					return pos.save()
				}
				return nil
			})
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			if serr := pos.save(); err == nil {
				err = serr
			}
			if interrupted(ctx, err) {
				return nil // the normal end of tail --follow
			}
			return err
		})
	}
}

// feedCmd shows, enables or disables a table's change feed.
func feedCmd(fs *flag.FlagSet, e *env) func(context.Context, []string) error {
	retention := fs.Duration("retention", tablekit.DefaultFeedRetention, "how long records are kept (whole hours, 24h-168h)")
	return func(ctx context.Context, args []string) error {
		return e.withClient(ctx, func(db *tablekit.Client) error {
			t := db.Table(args[0])
			var err error
			if len(args) == 2 {
				switch args[1] {
				case "on":
					_, err = t.EnableChangeFeed(ctx, *retention)
				case "off":
					err = t.DisableChangeFeed(ctx)
				default:
					return usagef("feed TABLE [on|off], not %q", args[1])
				}
				if err != nil {
					return err
				}
			}
			st, err := t.ChangeFeed(ctx)
			if err != nil {
				return err
			}
			type shard struct {
				ID      string   `json:"id"`
				Parents []string `json:"parents,omitempty"`
				Ended   bool     `json:"ended,omitempty"`
			}
			out := struct {
				Enabled   bool    `json:"enabled"`
				Retention string  `json:"retention"`
				Shards    []shard `json:"shards"`
			}{Enabled: st.Enabled, Retention: st.Retention.String(), Shards: []shard{}}
			for _, s := range st.Shards {
				out.Shards = append(out.Shards, shard{s.ID, s.Parents, s.Ended})
			}
			b, err := json.Marshal(out)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(e.stdout, "%s\n", b)
			return err
		})
	}
}
