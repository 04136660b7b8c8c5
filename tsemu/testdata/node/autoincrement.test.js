// Auto-increment primary-key columns of the Tablestore emulator, driven
// from the Node.js SDK (npm tablestore): CreateTable with
// option AUTO_INCREMENT, DescribeTable, TableStore.PK_AUTO_INCR in putRow,
// updateRow and batchWriteRow with returnType Primarykey, and the
// placeholder refused in a read. Run by TestNodeSDK with mocha beside
// probe.test.js.
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

function call(op, params) {
  return new Promise((resolve, reject) => {
    client[op](params, (err, data) => (err ? reject(err) : resolve(data)));
  });
}

const table = 'node_autoinc';
const ignore = () => new TableStore.Condition(TableStore.RowExistenceExpectation.IGNORE, null);
const auto = (p) => [{ p: p }, { id: TableStore.PK_AUTO_INCR }];
const returnPk = { returnType: TableStore.ReturnType.Primarykey };

// assigned checks that key is [p, id] with id an integer (an Int64, as
// the SDK decodes integers) > after, and returns id as a BigInt.
function assigned(key, p, after) {
  assert.ok(Array.isArray(key) && key.length === 2, JSON.stringify(key));
  assert.strictEqual(key[0].name, 'p');
  assert.strictEqual(key[0].value, p);
  assert.strictEqual(key[1].name, 'id');
  const v = key[1].value;
  assert.ok(v && typeof v.toNumber === 'function', `id ${JSON.stringify(v)} is not an Int64`);
  const id = BigInt(v.toString());
  assert.ok(id > after, `id ${id} is not greater than ${after}`);
  return id;
}

describe('autoincrement', function () {
  this.timeout(20000);

  it('creates a table with an AUTO_INCREMENT key column and describes it', async () => {
    await call('createTable', {
      tableMeta: {
        tableName: table,
        primaryKey: [{ name: 'p', type: 'STRING' }, { name: 'id', type: 'INTEGER', option: 'AUTO_INCREMENT' }],
      },
      reservedThroughput: { capacityUnit: { read: 0, write: 0 } },
      tableOptions: { timeToLive: -1, maxVersions: 1 },
    });
    const d = await call('describeTable', { tableName: table });
    const pk = d.tableMeta.primaryKey;
    assert.deepStrictEqual(pk.map((c) => c.name), ['p', 'id']);
    // option is set on id only (protobufjs puts absent fields' defaults on
    // the prototype).
    const own = (o, f) => Object.prototype.hasOwnProperty.call(o, f);
    assert.ok(!own(pk[0], 'option'), JSON.stringify(pk[0]));
    assert.ok(own(pk[1], 'option') && (pk[1].option === 1 || pk[1].option === 'AUTO_INCREMENT'), JSON.stringify(pk[1]));
  });

  it('assigns increasing keys in putRow, updateRow and batchWriteRow', async () => {
    let last = 0n;
    for (let i = 0; i < 3; i++) {
      const put = await call('putRow', {
        tableName: table, condition: ignore(), primaryKey: auto('a'),
        attributeColumns: [{ v: Long.fromNumber(i) }], returnContent: returnPk,
      });
      last = assigned(put.row.primaryKey, 'a', last);
    }
    const got = await call('getRow', { tableName: table, primaryKey: [{ p: 'a' }, { id: Long.fromString(last.toString()) }], maxVersions: 1 });
    assert.strictEqual(got.row.attributes[0].columnValue.toNumber(), 2);

    const upd = await call('updateRow', {
      tableName: table, condition: ignore(), primaryKey: auto('a'),
      updateOfAttributeColumns: [{ PUT: [{ v: Long.fromNumber(3) }] }], returnContent: returnPk,
    });
    last = assigned(upd.row.primaryKey, 'a', last);

    const w = await call('batchWriteRow', {
      tables: [{
        tableName: table,
        rows: [
          { type: 'PUT', condition: ignore(), primaryKey: auto('b'), attributeColumns: [{ v: Long.fromNumber(4) }], returnContent: returnPk },
          { type: 'PUT', condition: ignore(), primaryKey: auto('b'), attributeColumns: [{ v: Long.fromNumber(5) }], returnContent: returnPk },
        ],
      }],
    });
    assert.strictEqual(w.tables.length, 2);
    assert.ok(w.tables.every((r) => r.isOk), JSON.stringify(w.tables));
    const ids = w.tables.map((r) => assigned(r.primaryKey, 'b', 0n));
    assert.notStrictEqual(ids[0], ids[1]);

    const r = await call('getRange', {
      tableName: table, direction: TableStore.Direction.FORWARD, maxVersions: 1,
      inclusiveStartPrimaryKey: [{ p: TableStore.INF_MIN }, { id: TableStore.INF_MIN }],
      exclusiveEndPrimaryKey: [{ p: TableStore.INF_MAX }, { id: TableStore.INF_MAX }],
    });
    assert.strictEqual(r.rows.length, 6);
  });

  it('refuses the placeholder in a read', async () => {
    try {
      await call('getRow', { tableName: table, primaryKey: auto('a'), maxVersions: 1 });
    } catch (err) {
      assert.strictEqual(err.code, 400, err.message);
      assert.ok(err.message.includes('OTSInvalidPK'), err.message);
      assert.ok(err.message.includes('Validate PK type fail. Input: VT_AUTO_INCREMENT, Meta: VT_INTEGER.'), err.message);
      return;
    }
    assert.fail('getRow with PK_AUTO_INCR succeeded');
  });

  after(async () => {
    await call('deleteTable', { tableName: table });
  });
});
