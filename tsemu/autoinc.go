package tsemu

//lint:file-ignore SA1019 the SDK's otsprotocol messages are golang/protobuf APIv1 messages (no ProtoReflect), which github.com/golang/protobuf/proto handles as they are.

import (
	"context"
	"fmt"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"

	"github.com/tablekit/tablekit"
)

// Auto-increment primary-key columns (SPEC §14, Tablestore's
// AUTO_INCREMENT option): CreateTable declares at most one, INTEGER and not
// the first (partition) column; DescribeTable shows it. A row to put or
// update passes the AUTO_INCREMENT placeholder as that column's value and
// the emulator hands tablekit.AutoIncrement down to the Backend, which
// assigns the value (tablekit.Capabilities.AutoIncrement: over a Backend
// without it CreateTable of such a table is refused as unsupported). The
// write's answer carries the key written: RT_PK returns it (per row in
// BatchWriteRow, atomic or not). The placeholder anywhere else (a read, a
// delete, a range bound, another key column) fails the key's type check,
// as a value of the wrong type does. As on the service, a write with the
// placeholder takes no condition: a row existence other than IGNORE is
// "Invalid expect:EXPECT_NOT_EXIST when modify row with pk auto increment"
// (the service's words for EXPECT_NOT_EXIST, reported in
// aliyun-tablestore-python-sdk#3), a column condition "Can't set condition
// when modify row with pk auto increment." (the service's documentation);
// the tablekit adapter evaluates the condition against the absent row
// itself.

// autoIncrementColumn applies CreateTable's rules to the option of
// primary-key column i (pk) of meta, whose earlier columns are in
// meta.Key: it reports whether the column is auto-increment.
func (s *Server) autoIncrementColumn(meta *tablekit.TableMeta, i int, pk *otsprotocol.PrimaryKeySchema) (bool, *otsError) {
	if pk.Option == nil {
		return false, nil
	}
	switch {
	case pk.GetOption() != otsprotocol.PrimaryKeyOption_AUTO_INCREMENT:
		return false, paramErr("Invalid primary key option: %d of primary key column: '%s'.", pk.GetOption(), pk.GetName())
	case pk.GetType() != otsprotocol.PrimaryKeyType_INTEGER:
		return false, paramErr("AUTO_INCREMENT primary key must be integer: column '%s' of table '%s'.", pk.GetName(), meta.Name)
	case i == 0:
		return false, paramErr("AUTO_INCREMENT primary key can not be the partition key: column '%s' of table '%s'.", pk.GetName(), meta.Name)
	}
	for _, kc := range meta.Key {
		if kc.AutoIncrement {
			return false, paramErr("At most one AUTO_INCREMENT primary key is allowed in table '%s': '%s' and '%s'.", meta.Name, kc.Name, pk.GetName())
		}
	}
	if !s.client.Capabilities().AutoIncrement {
		return false, unsupported(fmt.Sprintf("AUTO_INCREMENT primary key (column '%s' of table '%s') over a backend without auto-increment keys (tablekit Capabilities.AutoIncrement is false)", pk.GetName(), meta.Name))
	}
	return true, nil
}

// keyOption is the option DescribeTable shows for key column kc.
func keyOption(kc tablekit.KeyColumn) *otsprotocol.PrimaryKeyOption {
	if kc.AutoIncrement {
		return otsprotocol.PrimaryKeyOption_AUTO_INCREMENT.Enum()
	}
	return nil
}

// hasPlaceholder reports whether a decoded key holds tablekit.AutoIncrement.
func hasPlaceholder(k tablekit.PrimaryKey) bool { return k.AutoIncrementIndex() >= 0 }

// written records the key the Backend wrote for w when w's key held the
// placeholder (k is the write's result key; nil changes nothing).
func (w *write) written(k tablekit.PrimaryKey) {
	if k != nil && hasPlaceholder(w.key) {
		w.key = k
	}
}

// put applies put w to t with condition cond, recording the key written.
func (w *write) put(ctx context.Context, t *tablekit.Table, cond tablekit.Condition) error {
	if !hasPlaceholder(w.key) {
		return t.PutRow(ctx, w.key, w.bw.Columns, cond)
	}
	var k tablekit.PrimaryKey
	err := t.PutRow(ctx, w.key, w.bw.Columns, cond, tablekit.ReturnKey(&k))
	w.written(k)
	return err
}

// checkAutoIncrementCondition refuses a condition on a write whose key
// holds the placeholder, as the service does.
func checkAutoIncrementCondition(key tablekit.PrimaryKey, c *otsprotocol.Condition) *otsError {
	if !hasPlaceholder(key) {
		return nil
	}
	if e := c.GetRowExistence(); e != otsprotocol.RowExistenceExpectation_IGNORE {
		return paramErr("Invalid expect:%s when modify row with pk auto increment", e)
	}
	if len(c.ColumnCondition) > 0 {
		return paramErr("Can't set condition when modify row with pk auto increment.")
	}
	return nil
}
