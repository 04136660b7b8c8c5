package fileengine

import "github.com/cockroachdb/pebble/v2/vfs"

// Options.NoSync is built from two pieces, because pebble's own relaxed
// mode (committing with pebble.NoSync) does not keep its promise to a
// process: such a commit returns once its record is in the log writer's
// in-memory block, and pebble's flusher goroutine writes that block to
// the file later. A process killed in between loses writes it had
// acknowledged (TestCrash/nosync lost hundreds per kill).
//
// So a NoSync engine commits with pebble.Sync, which waits until the
// flusher has written the record to the log file (a write(2): the
// operating system holds it, whatever becomes of the process), and opens
// pebble on walNoSyncFS, which makes the "sync" that follows that write
// do nothing for write-ahead-log files: no fsync (until pebble closes a
// log, see noSyncFile), so a machine crash may still lose the last
// writes. Everything else pebble writes (table files,
// the MANIFEST, directories) is synced as in the default mode, and
// concurrent commits still share one write of the log.

// walCategory is the write category pebble creates its write-ahead-log
// files with.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// walNoSyncFS is an FS whose write-ahead-log files never reach stable
// storage by a sync of theirs (see above).
type walNoSyncFS struct{ vfs.FS }

func (fs walNoSyncFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return walFile(f, category), err
}

func (fs walNoSyncFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return walFile(f, category), err
}

// walFile wraps f in noSyncFile when it is a write-ahead log.
func walFile(f vfs.File, category vfs.DiskWriteCategory) vfs.File {
	if f == nil || category != walCategory {
		return f
	}
	return noSyncFile{f}
}

// noSyncFile is a file whose syncs do nothing: its writes reach the
// operating system, and the disk when the operating system writes them
// back. Closing it syncs it, as closing a log did under pebble.NoSync:
// a log that pebble has moved on from is on the disk, so that a machine
// crash loses only from the newest log.
type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                { return nil }
func (noSyncFile) SyncData() error            { return nil }
func (noSyncFile) SyncTo(int64) (bool, error) { return false, nil }

func (f noSyncFile) Close() error {
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	return err
}
