// The table API of the Tablestore emulator, driven from the Node.js SDK
// (npm tablestore). Run by TestNodeSDK with mocha; the endpoint and
// credentials come from the environment, as the SDK's own tests take them.
'use strict';

const assert = require('assert');
const TableStore = require('tablestore');

const Long = TableStore.Long;
const client = new TableStore.Client({
  accessKeyId: process.env.accessKeyId,
  secretAccessKey: process.env.secretAccessKey,
  endpoint: process.env.endpoint,
  instancename: process.env.instancename,
  maxRetries: 0,
});

// call runs one SDK operation and resolves with its answer.
function call(op, params) {
  return new Promise((resolve, reject) => {
    client[op](params, (err, data) => (err ? reject(err) : resolve(data)));
  });
}

// status is the HTTP status of each error code the probe expects.
const status = {
  OTSObjectAlreadyExist: 409, OTSObjectNotExist: 404, OTSConditionCheckFail: 403,
  OTSRowOperationConflict: 409, OTSSessionNotExist: 404, OTSParameterInvalid: 400,
};

// fails runs op and checks the error. The Node.js SDK reads error bodies as
// XML, so with the service's protobuf errors (and the emulator's) err.code
// is the HTTP status and err.message holds the raw otsprotocol.Error: the
// code and the message are checked in it.
async function fails(op, params, code, message) {
  try {
    await call(op, params);
  } catch (err) {
    assert.strictEqual(err.code, status[code], `${op}: got ${err.code} ${err.message}`);
    assert.ok(err.message.includes(code), `${op}: ${err.message} lacks ${code}`);
    assert.ok(err.message.includes(message), `${op}: ${err.message} lacks ${message}`);
    return;
  }
  assert.fail(`${op} succeeded, want ${code}`);
}

const table = 'node_probe';
const ignore = () => new TableStore.Condition(TableStore.RowExistenceExpectation.IGNORE, null);
const key = (id, n) => [{ id: id }, { n: Long.fromNumber(n) }];
const cols = (row) => {
  const m = {};
  for (const c of (row && row.attributes) || []) {
    (m[c.columnName] = m[c.columnName] || []).push(c.columnValue);
  }
  return m;
};
const num = (v) => (v && typeof v.toNumber === 'function' ? v.toNumber() : v);

describe('probe', function () {
  this.timeout(20000);

  it('creates, lists, describes and updates a table', async () => {
    await call('createTable', {
      tableMeta: { tableName: table, primaryKey: [{ name: 'id', type: 'STRING' }, { name: 'n', type: 'INTEGER' }] },
      reservedThroughput: { capacityUnit: { read: 0, write: 0 } },
      tableOptions: { timeToLive: -1, maxVersions: 3 },
    });
    await fails('createTable', {
      tableMeta: { tableName: table, primaryKey: [{ name: 'id', type: 'STRING' }] },
      reservedThroughput: { capacityUnit: { read: 0, write: 0 } },
      tableOptions: { timeToLive: -1, maxVersions: 1 },
    }, 'OTSObjectAlreadyExist', 'Requested table already exists.');
    const list = await call('listTable', {});
    assert.ok(list.tableNames.includes(table), JSON.stringify(list));
    const d = await call('describeTable', { tableName: table });
    assert.strictEqual(d.tableMeta.tableName, table);
    assert.deepStrictEqual(d.tableMeta.primaryKey.map((p) => p.name), ['id', 'n']);
    assert.strictEqual(d.tableOptions.maxVersions, 3);
    const u = await call('updateTable', { tableName: table, tableOptions: { maxVersions: 5 } });
    assert.strictEqual(u.tableOptions.maxVersions, 5);
    await fails('describeTable', { tableName: 'node_probe_missing' }, 'OTSObjectNotExist', 'Requested table does not exist.');
  });

  it('puts and gets rows, with explicit timestamps and every value type', async () => {
    const ts = Date.now() - 1000;
    const put = await call('putRow', {
      tableName: table, condition: ignore(), primaryKey: key('a', 1),
      attributeColumns: [
        { s: 'text' }, { i: Long.fromNumber(7) }, { f: 1.5 }, { b: true }, { bin: Buffer.from([1, 2, 3]) },
        { v: 'old', timestamp: Long.fromNumber(ts) },
      ],
      returnContent: { returnType: TableStore.ReturnType.Primarykey },
    });
    assert.strictEqual(put.row.primaryKey[0].value, 'a');
    await call('updateRow', {
      tableName: table, condition: ignore(), primaryKey: key('a', 1),
      updateOfAttributeColumns: [{ PUT: [{ v: 'new', timestamp: Long.fromNumber(ts + 500) }] }],
    });
    const got = await call('getRow', { tableName: table, primaryKey: key('a', 1), maxVersions: 5 });
    const m = cols(got.row);
    assert.deepStrictEqual(m.s, ['text']);
    assert.strictEqual(num(m.i[0]), 7);
    assert.strictEqual(m.f[0], 1.5);
    assert.strictEqual(m.b[0], true);
    assert.deepStrictEqual([...m.bin[0]], [1, 2, 3]);
    assert.deepStrictEqual(m.v, ['new', 'old']);
    // One version at a time: the time range selects the older one.
    const old = await call('getRow', {
      tableName: table, primaryKey: key('a', 1), columnsToGet: ['v'],
      timeRange: { startTime: String(ts), endTime: String(ts + 1) },
    });
    assert.deepStrictEqual(cols(old.row), { v: ['old'] });
    // A projection naming only absent columns: the row is absent.
    const none = await call('getRow', { tableName: table, primaryKey: key('a', 1), columnsToGet: ['nope'], maxVersions: 1 });
    assert.ok(!none.row || !none.row.primaryKey, JSON.stringify(none.row));
    // Deleting one version (the SDK pads this row with zero bytes).
    await call('updateRow', {
      tableName: table, condition: ignore(), primaryKey: key('a', 1),
      updateOfAttributeColumns: [{ DELETE: [{ v: Long.fromNumber(ts + 500) }] }, { DELETE_ALL: ['bin'] }],
    });
    const after = cols((await call('getRow', { tableName: table, primaryKey: key('a', 1), maxVersions: 5 })).row);
    assert.deepStrictEqual(after.v, ['old']);
    assert.strictEqual(after.bin, undefined);
  });

  it('increments and returns the new value', async () => {
    const r = await call('updateRow', {
      tableName: table, condition: ignore(), primaryKey: key('a', 1),
      updateOfAttributeColumns: [{ INCREMENT: [{ i: Long.fromNumber(5) }] }],
      returnContent: { returnColumns: ['i'], returnType: TableStore.ReturnType.AfterModify },
    });
    assert.strictEqual(num(r.row.attributes[0].columnValue), 12);
  });

  it('checks conditions with the service messages', async () => {
    await fails('putRow', {
      tableName: table, primaryKey: key('a', 1), attributeColumns: [{ x: 'y' }],
      condition: new TableStore.Condition(TableStore.RowExistenceExpectation.EXPECT_NOT_EXIST, null),
    }, 'OTSConditionCheckFail', 'Row exists which is expected nonexistent');
    await fails('updateRow', {
      tableName: table, primaryKey: key('zz', 1), updateOfAttributeColumns: [{ PUT: [{ x: 'y' }] }],
      condition: new TableStore.Condition(TableStore.RowExistenceExpectation.EXPECT_EXIST, null),
    }, 'OTSConditionCheckFail', 'Row does not exist which is expected existent');
    await fails('deleteRow', {
      tableName: table, primaryKey: key('a', 1),
      condition: new TableStore.Condition(TableStore.RowExistenceExpectation.EXPECT_EXIST,
        new TableStore.SingleColumnCondition('s', 'other', TableStore.ComparatorType.EQUAL)),
    }, 'OTSConditionCheckFail', 'Condition check failed.');
    await call('putRow', {
      tableName: table, primaryKey: key('a', 1), attributeColumns: [{ s: 'text' }, { i: Long.fromNumber(12) }],
      condition: new TableStore.Condition(TableStore.RowExistenceExpectation.EXPECT_EXIST,
        new TableStore.SingleColumnCondition('s', 'text', TableStore.ComparatorType.EQUAL)),
    });
  });

  it('writes and reads in batches', async () => {
    const rows = [];
    for (let n = 0; n < 10; n++) {
      rows.push({ type: 'PUT', condition: ignore(), primaryKey: key('b', n), attributeColumns: [{ n2: Long.fromNumber(n * n) }] });
    }
    rows.push({ type: 'DELETE', condition: ignore(), primaryKey: key('a', 1) });
    const w = await call('batchWriteRow', { tables: [{ tableName: table, rows }] });
    assert.ok(w.tables.every((r) => r.isOk), JSON.stringify(w.tables));
    const g = await call('batchGetRow', {
      tables: [{ tableName: table, primaryKey: [key('b', 3), key('a', 1), key('b', 9)], maxVersions: 1 }],
    });
    const res = g.tables[0];
    assert.strictEqual(res.length, 3);
    assert.ok(res.every((r) => r.isOk));
    assert.strictEqual(num(cols(res[0]).n2[0]), 9);
    assert.ok(!res[1].primaryKey, JSON.stringify(res[1]));
    assert.strictEqual(num(cols(res[2]).n2[0]), 81);
    await fails('batchGetRow', {
      tables: [{ tableName: 'node_probe_missing', primaryKey: [key('b', 1)], maxVersions: 1 }],
    }, 'OTSObjectNotExist', 'Requested table does not exist.');
  });

  it('scans ranges with INF bounds, pages, directions and filters', async () => {
    const range = async (params) => {
      const out = [];
      let start = params.inclusiveStartPrimaryKey;
      for (;;) {
        const r = await call('getRange', Object.assign({ tableName: table, maxVersions: 1 }, params, { inclusiveStartPrimaryKey: start }));
        out.push(...r.rows);
        if (!r.nextStartPrimaryKey) {
          return out;
        }
        start = r.nextStartPrimaryKey.map((p) => ({ [p.name]: p.value }));
      }
    };
    const min = [{ id: TableStore.INF_MIN }, { n: TableStore.INF_MIN }];
    const max = [{ id: TableStore.INF_MAX }, { n: TableStore.INF_MAX }];
    const all = await range({ direction: TableStore.Direction.FORWARD, inclusiveStartPrimaryKey: min, exclusiveEndPrimaryKey: max, limit: 3 });
    assert.deepStrictEqual(all.map((r) => num(r.primaryKey[1].value)), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const back = await range({ direction: TableStore.Direction.BACKWARD, inclusiveStartPrimaryKey: max, exclusiveEndPrimaryKey: min, limit: 4 });
    assert.deepStrictEqual(back.map((r) => num(r.primaryKey[1].value)), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    // A filter on an attribute column, and one on a primary-key column.
    const f = new TableStore.CompositeCondition(TableStore.LogicalOperator.AND);
    f.addSubCondition(new TableStore.SingleColumnCondition('n2', Long.fromNumber(10), TableStore.ComparatorType.GREATER_THAN));
    f.addSubCondition(new TableStore.SingleColumnCondition('n', Long.fromNumber(8), TableStore.ComparatorType.LESS_THAN));
    const filtered = await range({
      direction: TableStore.Direction.FORWARD, inclusiveStartPrimaryKey: min, exclusiveEndPrimaryKey: max, columnFilter: f,
    });
    assert.deepStrictEqual(filtered.map((r) => num(r.primaryKey[1].value)), [4, 5, 6, 7]);
  });

  it('keeps a global secondary index in step and reads it', async () => {
    const base = 'node_probe_idx';
    await call('createTable', {
      tableMeta: {
        tableName: base,
        primaryKey: [{ name: 'id', type: 'STRING' }],
        definedColumn: [{ name: 'c', type: TableStore.DefinedColumnType.DCT_STRING }, { name: 'v', type: TableStore.DefinedColumnType.DCT_INTEGER }],
      },
      reservedThroughput: { capacityUnit: { read: 0, write: 0 } },
      tableOptions: { timeToLive: -1, maxVersions: 1 },
      indexMetas: [{ name: 'node_probe_by_c', primaryKey: ['c'], definedColumn: ['v'] }],
    });
    for (const [id, c, v] of [['a', 'x', 1], ['b', 'w', 2], ['c', 'y', 3]]) {
      await call('putRow', { tableName: base, condition: ignore(), primaryKey: [{ id }], attributeColumns: [{ c }, { v: Long.fromNumber(v) }] });
    }
    await call('updateRow', {
      tableName: base, condition: ignore(), primaryKey: [{ id: 'c' }], updateOfAttributeColumns: [{ PUT: [{ c: 'a' }] }],
    });
    await call('deleteRow', { tableName: base, condition: ignore(), primaryKey: [{ id: 'b' }] });
    const r = await call('getRange', {
      tableName: 'node_probe_by_c', direction: TableStore.Direction.FORWARD, maxVersions: 1,
      inclusiveStartPrimaryKey: [{ c: TableStore.INF_MIN }, { id: TableStore.INF_MIN }],
      exclusiveEndPrimaryKey: [{ c: TableStore.INF_MAX }, { id: TableStore.INF_MAX }],
    });
    assert.deepStrictEqual(r.rows.map((row) => [row.primaryKey[0].value, row.primaryKey[1].value, num(cols(row).v[0])]),
      [['a', 'c', 3], ['x', 'a', 1]]);
    const d = await call('describeTable', { tableName: base });
    assert.deepStrictEqual(d.indexMetas.map((m) => m.name), ['node_probe_by_c']);
    await call('deleteTable', { tableName: base });
  });

  it('runs local transactions', async () => {
    const start = { tableName: table, primaryKey: [{ id: 't' }] };
    if (process.env.TSTEST_PROBE_NO_TRANSACTIONS) {
      // The emulator's Backend has no atomic writes: refused.
      await fails('startLocalTransaction', start, 'OTSParameterInvalid', 'explicit-transaction-disabled table');
      return;
    }
    const get = async (n, transactionId) => {
      const r = await call('getRow', Object.assign({ tableName: table, primaryKey: key('t', n), maxVersions: 1 }, transactionId ? { transactionId } : {}));
      return r.row && r.row.primaryKey ? cols(r.row).v[0] : undefined;
    };
    const put = (n, v, transactionId) => call('putRow', Object.assign({
      tableName: table, condition: ignore(), primaryKey: key('t', n), attributeColumns: [{ v }],
    }, transactionId ? { transactionId } : {}));
    const { transactionId } = await call('startLocalTransaction', start);
    assert.ok(transactionId, 'no transaction id');
    await put(1, 'in', transactionId);
    assert.strictEqual(await get(1), undefined);
    assert.strictEqual(await get(1, transactionId), 'in');
    await fails('putRow', { tableName: table, condition: ignore(), primaryKey: key('t', 2), attributeColumns: [{ v: 'out' }] },
      'OTSRowOperationConflict', 'Data is being modified by the other request.');
    await call('commitTransaction', { transactionId });
    assert.strictEqual(await get(1), 'in');
    await fails('commitTransaction', { transactionId }, 'OTSSessionNotExist', 'Session not exist or may be timeout.');
    const second = (await call('startLocalTransaction', start)).transactionId;
    await put(3, 'aborted', second);
    await call('abortTransaction', second);
    assert.strictEqual(await get(3), undefined);
    await put(2, 'out');
    assert.strictEqual(await get(2), 'out');
  });

  it('deletes rows and the table', async () => {
    await call('deleteRow', { tableName: table, condition: ignore(), primaryKey: key('b', 0) });
    const g = await call('getRow', { tableName: table, primaryKey: key('b', 0), maxVersions: 1 });
    assert.ok(!g.row || !g.row.primaryKey, JSON.stringify(g.row));
    await call('deleteTable', { tableName: table });
    await fails('getRow', { tableName: table, primaryKey: key('b', 1), maxVersions: 1 }, 'OTSObjectNotExist', 'Requested table does not exist.');
  });
});
