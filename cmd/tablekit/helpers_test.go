package main

import (
	"github.com/tablekit/tablekit"
)

// tableMeta is a table of key schema spec (NAME:TYPE,...).
func tableMeta(name, spec string) *tablekit.TableMeta {
	ks, err := parseSchema(spec)
	if err != nil {
		panic(err)
	}
	return &tablekit.TableMeta{Name: name, Key: ks}
}

// mustKey is a (String, Integer, Binary) key of m.
func mustKey(m *tablekit.TableMeta, s string, i int64, b string) tablekit.PrimaryKey {
	return tablekit.Key(m.Key[0].Name, tablekit.String(s)).
		Add(m.Key[1].Name, tablekit.Integer(i)).
		Add(m.Key[2].Name, tablekit.BinaryString(b))
}
