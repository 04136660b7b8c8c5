// Command comments is for readers learning wide rows and versions: seed
// 000's single-table video design done the Bigtable way: one wide row per
// video holding its format, its counters and every comment as a version of
// one column (the version is the comment's time), so the latest N comments
// come back newest first in one read and a viewer pages back through older
// ones by time range.
//
// A version is a millisecond: two comments stamped with the same
// millisecond would be one version, the later; a service that can receive
// two at once gives the second the next free millisecond, or keeps
// comments in rows keyed by (video, time, id).
package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tablekit/tablekit"
	"github.com/tablekit/tablekit/examples/internal/exampledb"
)

func main() { exampledb.Main(run) }

// This example works with versions of one column (a comment is a version
// of "comments"), which struct mapping does not cover: typed maps a
// column's latest version to a field. It uses rows and changes directly.
func run(ctx context.Context, db *tablekit.Client, out io.Writer) error {
	var check exampledb.Checker
	// Keep the newest 1000 comments; allow importing comments up to ~3 years old.
	if err := db.CreateTable(ctx, tablekit.TableMeta{
		Name:    "videos",
		Key:     tablekit.KeySchema{{Name: "video", Type: tablekit.TypeString}},
		Options: tablekit.TableOptions{MaxVersions: 1000, MaxVersionOffset: 3 * 365 * 86400 * time.Second},
	}); err != nil {
		return err
	}
	tbl := db.Table("videos")
	video := tablekit.Key("video", tablekit.String("0123"))
	posted := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := tbl.PutRow(ctx, video, []tablekit.Column{
		{Name: "format", Value: tablekit.String(`{"480":"https://storage.example/480","1080p":"https://storage.example/1080"}`), Version: tablekit.VersionAt(posted)},
	}); err != nil {
		return err
	}
	// 25 comments, a minute apart, and a view and maybe a like for each.
	for i := range 25 {
		at := posted.Add(time.Duration(i+1) * time.Minute)
		changes := []tablekit.Change{
			tablekit.PutAt("comments", tablekit.String(fmt.Sprintf("comment %02d", i)), tablekit.VersionAt(at)),
			tablekit.Increment("views", 1),
		}
		if i%3 == 0 {
			changes = append(changes, tablekit.Increment("likes", 1))
		}
		if _, err := tbl.UpdateRow(ctx, video, changes); err != nil {
			return err
		}
	}
	// Counters are atomic increments: no read-modify-write in the program.
	res, err := tbl.UpdateRow(ctx, video, []tablekit.Change{tablekit.Increment("views", 1)})
	if err != nil {
		return err
	}
	views, _ := res.Increments[0].Value.Int()
	check.Expect(views == 26, "views = %d", views)

	// The video page: format, counters and the latest 5 comments, one read.
	row, _, err := tbl.GetRow(ctx, video, tablekit.MaxVersions(5))
	if err != nil {
		return err
	}
	latest := row.Versions("comments")
	likes, _ := row.Get("likes")
	fmt.Fprintf(out, "video 0123: %d views, likes %v, latest comments:\n", views, likes)
	for _, c := range latest {
		fmt.Fprintf(out, "  %s  %v\n", tablekit.VersionTime(c.Version).UTC().Format(time.TimeOnly), c.Value)
	}
	check.Expect(len(latest) == 5 && latest[0].Value == tablekit.String("comment 24"), "latest 5: %v", latest)
	check.Expect(likes == tablekit.Integer(9), "likes = %v", likes)

	// Scrolling: the 5 comments older than the oldest one shown.
	older, _, err := tbl.GetRow(ctx, video, tablekit.Columns("comments"), tablekit.MaxVersions(5),
		tablekit.Versions(0, latest[len(latest)-1].Version))
	if err != nil {
		return err
	}
	page2 := older.Versions("comments")
	check.Expect(len(page2) == 5 && page2[0].Value == tablekit.String("comment 19"), "page 2: %v", page2)
	fmt.Fprintf(out, "next page starts at %v\n", page2[0].Value)

	// Deleting the video deletes its comments and counters with it: one row.
	if err := tbl.DeleteRow(ctx, video); err != nil {
		return err
	}
	_, found, err := tbl.GetRow(ctx, video)
	check.Expect(err == nil && !found, "after delete: found=%v err=%v", found, err)
	fmt.Fprintln(out, "deleted the video with all its comments in one DeleteRow")
	return check.Err()
}
