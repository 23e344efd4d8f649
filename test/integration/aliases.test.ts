/**
 * Aliases in the engine (db/aliases.ts) against a plain model: random creates and drops of
 * collections and random alias changes over one small pool of names (so that aliases and
 * collections keep colliding), with restarts; after every step the aliases, every name's
 * resolution and every collection's aliases equal the model's. Then the races a drop can run with.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { open } from 'lmdb';
import { checkDatabase } from '../../src/db/check-database.js';
import { isKithError } from '../../src/core/errors.js';
import { SeededRng } from '../../src/core/rng.js';
import type { AliasAction } from '../../src/db/aliases.js';
import { Database } from '../../src/db/database.js';
import { LmdbStore } from '../../src/storage/lmdb-store.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const NAMES = ['a', 'b', 'c', 'd', 'e', 'f.g'];

interface Model {
  collections: Set<string>;
  aliases: Map<string, string>;
}

/** The model's rules, written apart from the engine's: the error code an action list meets, or the aliases after it. */
function modelChange(model: Model, actions: readonly AliasAction[]): { code: string } | { aliases: Map<string, string> } {
  const next = new Map(model.aliases);
  for (const action of actions) {
    if ('create' in action) {
      if (!model.collections.has(action.create.collection)) return { code: 'ERR_COLLECTION_NOT_FOUND' };
      if (model.collections.has(action.create.alias)) return { code: 'ERR_COLLECTION_EXISTS' };
      next.set(action.create.alias, action.create.collection);
    } else if ('delete' in action) {
      next.delete(action.delete.alias);
    } else {
      const target = next.get(action.rename.from);
      if (target === undefined) return { code: 'ERR_ALIAS_NOT_FOUND' };
      if (model.collections.has(action.rename.to)) return { code: 'ERR_COLLECTION_EXISTS' };
      next.delete(action.rename.from);
      next.set(action.rename.to, target);
    }
  }
  return { aliases: next };
}

function drawAction(rng: SeededRng): AliasAction {
  const name = () => NAMES[rng.int(NAMES.length)] as string;
  const kind = rng.int(3);
  if (kind === 0) return { create: { alias: name(), collection: name() } };
  if (kind === 1) return { delete: { alias: name() } };
  return { rename: { from: name(), to: name() } };
}

async function codeOf(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run();
    return undefined;
  } catch (error) {
    if (isKithError(error)) return error.code;
    throw error;
  }
}

function checkAgainst(db: Database, model: Model, where: string): void {
  const expected = [...model.aliases].sort(([x], [y]) => (x < y ? -1 : 1)).map(([alias, collection]) => ({ alias, collection }));
  assert.deepEqual(db.aliases(), expected, `${where}: the aliases`);
  for (const name of NAMES) {
    const target = model.aliases.get(name) ?? (model.collections.has(name) ? name : undefined);
    let resolved: string | undefined;
    try {
      resolved = db.collection(name).name;
    } catch (error) {
      if (!isKithError(error) || error.code !== 'ERR_COLLECTION_NOT_FOUND') throw error;
    }
    assert.equal(resolved, target, `${where}: "${name}" names ${target ?? 'nothing'}`);
    if (model.collections.has(name)) {
      assert.deepEqual(
        db.aliasesOf(name),
        expected.filter((e) => e.collection === name).map((e) => e.alias),
        `${where}: the aliases of "${name}"`,
      );
      // A search through each alias reads the collection it names: each holds one point naming it.
      for (const alias of db.aliasesOf(name)) {
        const [hit] = db.collection(alias).search({ vector: [1, 0], limit: 1, with_payload: true });
        assert.equal(hit?.payload?.name, name, `${where}: a search through "${alias}"`);
      }
    }
  }
}

for (const seed of [1, 2, 3, 4]) {
  test(`aliases and collections, random changes with restarts, equal the model after every step (seed ${seed})`, async (t) => {
    const path = tempDbPath(t);
    let db = Database.open(path);
    t.after(() => db.close());
    const rng = new SeededRng(seed);
    const model: Model = { collections: new Set(), aliases: new Map() };
    const outcomes = new Map<string, number>();
    const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
    for (let step = 0; step < 160; step++) {
      const where = `seed ${seed}, step ${step}`;
      const roll = rng.int(20);
      try {
        if (roll < 4) {
          const name = NAMES[rng.int(NAMES.length)] as string;
          const want = model.aliases.has(name) ? 'ERR_BAD_INPUT' : model.collections.has(name) ? 'ERR_COLLECTION_EXISTS' : undefined;
          const got = await codeOf(async () => {
            await db.createCollection({ name, vector_size: 2, distance: 'dot' });
            await db.collection(name).upsert([{ id: 'p', vector: [1, 0], payload: { name } }]);
          });
          assert.equal(got, want, `${where}: create "${name}"`);
          if (want === undefined) model.collections.add(name);
          count(`create ${got ?? 'ok'}`);
        } else if (roll < 6) {
          const name = NAMES[rng.int(NAMES.length)] as string;
          const want = model.collections.has(name) ? undefined : 'ERR_COLLECTION_NOT_FOUND';
          const got = await codeOf(() => db.dropCollection(name));
          assert.equal(got, want, `${where}: drop "${name}"`);
          if (want === undefined) {
            model.collections.delete(name);
            for (const [alias, target] of model.aliases) if (target === name) model.aliases.delete(alias);
          }
          count(`drop ${got ?? 'ok'}`);
        } else if (roll < 7) {
          await db.close();
          db = Database.open(path);
          count('restart');
        } else {
          const actions = Array.from({ length: 1 + rng.int(3) }, () => drawAction(rng));
          const want = modelChange(model, actions);
          const got = await codeOf(() => db.changeAliases(actions));
          assert.equal(got, 'code' in want ? want.code : undefined, `${where}: ${JSON.stringify(actions)}`);
          if ('aliases' in want) model.aliases = want.aliases;
          count(`change ${got ?? 'ok'}`);
        }
        checkAgainst(db, model, where);
      } catch (error) {
        t.diagnostic(`failed at seed ${seed}`);
        throw error;
      }
    }
    // The run met every outcome it is meant to check, not only the easy ones.
    for (const outcome of [
      'change ok',
      'change ERR_COLLECTION_NOT_FOUND',
      'change ERR_COLLECTION_EXISTS',
      'change ERR_ALIAS_NOT_FOUND',
      'create ok',
      'drop ok',
      'restart',
    ]) {
      assert.ok((outcomes.get(outcome) ?? 0) > 0, `seed ${seed}: no "${outcome}" in ${JSON.stringify([...outcomes])}`);
    }
  });
}

test('an alias change racing a drop of its collection never leaves the alias behind, in memory or in the file', async (t) => {
  const path = tempDbPath(t);
  let db = Database.open(path);
  t.after(() => db.close());
  for (const changeFirst of [true, false]) {
    await db.createCollection({ name: 'old', vector_size: 2, distance: 'dot' });
    await db.createCollection({ name: 'other', vector_size: 2, distance: 'dot' });
    await db.changeAliases([{ create: { alias: 'kept', collection: 'other' } }]);
    const actions: AliasAction[] = [{ create: { alias: 'live', collection: 'old' } }];
    const [change, drop] = changeFirst
      ? [db.changeAliases(actions), db.dropCollection('old')]
      : await (async () => {
          const dropping = db.dropCollection('old');
          return [db.changeAliases(actions), dropping];
        })();
    await drop;
    const code = await codeOf(() => change);
    assert.ok(code === undefined || code === 'ERR_COLLECTION_NOT_FOUND', `the change ends or says the collection is gone (got ${code})`);
    assert.deepEqual(db.aliases(), [{ alias: 'kept', collection: 'other' }], `change first: ${changeFirst}`);
    await db.close();
    db = Database.open(path);
    assert.deepEqual(db.aliases(), [{ alias: 'kept', collection: 'other' }], `after a restart (change first: ${changeFirst})`);
    await db.dropCollection('other');
    assert.deepEqual(db.aliases(), [], 'a drop takes its aliases with it');
  }
});

test('a bad action list names the field and changes nothing; a drop never takes an alias', async (t) => {
  const db = Database.open(tempDbPath(t));
  t.after(() => db.close());
  await db.createCollection({ name: 'blue', vector_size: 2, distance: 'dot' });
  await db.changeAliases([{ create: { alias: 'live', collection: 'blue' } }]);
  const cases: Array<[unknown, string, RegExp]> = [
    [{}, 'ERR_BAD_INPUT', /^actions: expected array/],
    [
      [{ create: { alias: 'x', collection: 'blue' } }, { rename: { from: 'live', to: 'bad name' } }],
      'ERR_BAD_INPUT',
      /^actions\[1\]\.rename\.to: expected 1 to 255 characters/,
    ],
    [[{ create: { alias: 'x' } }], 'ERR_BAD_INPUT', /^actions\[0\]\.create\.collection: required/],
    [[{ delete: { alias: 'x', collection: 'blue' } }], 'ERR_BAD_INPUT', /^actions\[0\]\.delete\.collection: unknown field/],
    [
      [{ create: { alias: 'x', collection: 'blue' }, delete: { alias: 'y' } }],
      'ERR_BAD_INPUT',
      /^actions\[0\]: expected exactly one of create, delete, rename/,
    ],
    [[{ delete: { alias: 'live' } }, { rename: { from: 'live', to: 'y' } }], 'ERR_ALIAS_NOT_FOUND', /^actions\[1\]\.rename\.from: alias "live" does not exist/],
    [[{ create: { alias: 'blue', collection: 'blue' } }], 'ERR_COLLECTION_EXISTS', /^actions\[0\]\.create\.alias: a collection is named "blue"/],
    [Array.from({ length: 1001 }, () => ({ delete: { alias: 'x' } })), 'ERR_BAD_INPUT', /^actions: 1001 actions; at most 1000/],
  ];
  for (const [actions, code, message] of cases) {
    await assert.rejects(db.changeAliases(actions as AliasAction[]), (error: unknown) => {
      assert.ok(isKithError(error), String(error));
      assert.equal(error.code, code, JSON.stringify(actions).slice(0, 200));
      assert.match(error.message, message);
      return true;
    });
    assert.deepEqual(db.aliases(), [{ alias: 'live', collection: 'blue' }], 'nothing changed');
  }
  await assert.rejects(db.dropCollection('live'), /collection "live" does not exist \("live" is an alias of "blue"/);
  await assert.rejects(db.createCollection({ name: 'live', vector_size: 2, distance: 'dot' }), /name: "live" is an alias of collection "blue"/);
  assert.equal(db.collection('live').name, 'blue');
});

test('kith check reports an alias naming no collection, or taking a collection’s name; a sound file has no problem', async (t) => {
  const path = tempDbPath(t);
  const db = Database.open(path);
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'dot' });
  await db.changeAliases([{ create: { alias: 'live', collection: 'c' } }]);
  await db.close();
  assert.deepEqual((await checkDatabase(path)).problems, []);
  // Entries no kith writes: only a damaged or hand-edited file has them.
  const raw = open({ path, noSubdir: true });
  const meta = raw.openDB<unknown, string>({ name: 'meta' });
  await meta.put('alias/ghost', 'gone');
  await meta.put('alias/c', 'c');
  await meta.put('alias/odd', 7);
  await raw.close();
  const problems = (await checkDatabase(path)).problems;
  assert.deepEqual(problems.sort(), [
    'meta: alias "c" has the name of a collection',
    'meta: alias "ghost" names collection "gone", which does not exist',
    'meta: alias "odd" does not decode to a collection name',
  ]);
});

test('the store writes aliases only while every collection they name is stored, checked in the write itself', async (t) => {
  const path = tempDbPath(t);
  const db = Database.open(path);
  await db.createCollection({ name: 'c', vector_size: 2, distance: 'dot' });
  await db.changeAliases([{ create: { alias: 'live', collection: 'c' } }]);
  await db.close();
  const store = LmdbStore.open(path);
  t.after(() => store.close());
  // What a change validated before a drop committed would write after it.
  await assert.rejects(
    store.writeAliases(
      new Map([
        ['live', 'c'],
        ['late', 'dropped'],
      ]),
    ),
    (error: unknown) => isKithError(error) && error.code === 'ERR_COLLECTION_NOT_FOUND',
  );
  assert.deepEqual([...store.readAliases()], [['live', 'c']], 'nothing of the refused write');
  await store.writeAliases(new Map([['other', 'c']]));
  assert.deepEqual([...store.readAliases()], [['other', 'c']], 'a write replaces every alias');
});
