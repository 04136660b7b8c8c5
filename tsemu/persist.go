package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/golang/protobuf/proto"
)

// tableOps are the calls that change the per-table state the Backend does
// not keep (Server.extras); with Options.MetaFile it is saved after each.
var tableOps = map[string]bool{
	"CreateTable": true, "UpdateTable": true, "DeleteTable": true,
	"CreateIndex": true, "DropIndex": true,
	"AddDefinedColumn": true, "DeleteDefinedColumn": true,
}

// savedTable is a tableExtra as stored in Options.MetaFile.
type savedTable struct {
	ReadCU       int32          `json:"read_cu"`
	WriteCU      int32          `json:"write_cu"`
	LastIncrease int64          `json:"last_increase"`
	Defined      []savedDefined `json:"defined_columns,omitempty"`
	Created      int64          `json:"created_us"`
	Indexes      [][]byte       `json:"index_metas,omitempty"` // protobuf IndexMeta
	BaseOf       string         `json:"base_of,omitempty"`
	Stream       *savedStream   `json:"stream,omitempty"`
}

type savedDefined struct {
	Name string `json:"name"`
	Type int32  `json:"type"`
}

// metaSaver serializes the saves of one server.
type metaSaver struct{ mu sync.Mutex }

// saveMeta writes the per-table state to Options.MetaFile, durably
// (temporary file, fsync, rename, fsync of the directory), before the
// call that changed it is answered.
func (s *Server) saveMeta() error {
	if s.opts.MetaFile == "" {
		return nil
	}
	s.saver.mu.Lock()
	defer s.saver.mu.Unlock()
	s.mu.Lock()
	out := make(map[string]savedTable, len(s.extras))
	for name, ex := range s.extras {
		st := savedTable{ReadCU: ex.readCU, WriteCU: ex.writeCU, LastIncrease: ex.lastIncrease, Created: ex.created, BaseOf: ex.idx.baseOf, Stream: ex.stream.saved()}
		for _, d := range ex.definedColumns {
			st.Defined = append(st.Defined, savedDefined{d.name, d.typ})
		}
		for _, m := range ex.idx.metas {
			b, err := proto.Marshal(m)
			if err != nil {
				s.mu.Unlock()
				return err
			}
			st.Indexes = append(st.Indexes, b)
		}
		out[name] = st
	}
	s.mu.Unlock()
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	tmp := s.opts.MetaFile + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.opts.MetaFile); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(s.opts.MetaFile))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// loadMeta reads Options.MetaFile, if it exists, into s.extras.
func (s *Server) loadMeta() error {
	if s.opts.MetaFile == "" {
		return nil
	}
	b, err := os.ReadFile(s.opts.MetaFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var in map[string]savedTable
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("tsemu: %s: %w", s.opts.MetaFile, err)
	}
	for name, st := range in {
		ex := &tableExtra{readCU: st.ReadCU, writeCU: st.WriteCU, lastIncrease: st.LastIncrease, created: st.Created}
		ex.idx.baseOf = st.BaseOf
		ex.stream = st.Stream.extra()
		for _, d := range st.Defined {
			ex.definedColumns = append(ex.definedColumns, definedColumn{d.Name, d.Type})
		}
		for _, raw := range st.Indexes {
			m := new(otsprotocol.IndexMeta)
			if err := proto.Unmarshal(raw, m); err != nil {
				return fmt.Errorf("tsemu: %s: index of %s: %w", s.opts.MetaFile, name, err)
			}
			ex.idx.metas = append(ex.idx.metas, m)
		}
		if ex.idx.indexed() {
			ex.idx.mu = new(sync.Mutex)
		}
		s.extras[name] = ex
	}
	return nil
}
