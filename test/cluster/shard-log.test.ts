/**
 * A shard's log (src/cluster/shard-log.ts) on a real 3-server NATS cluster on loopback, streams
 * replicated 3 ways and fsynced before each acknowledgement: order, exactly-once appends across
 * retries and a leader's kill -9, and the regression guard a replica relies on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { ShardLog, type ShardLogSpec } from '../../src/cluster/shard-log.js';
import { isKithError } from '../../src/core/errors.js';
import { natsClusterPerSuite, streamLeader } from '../helpers/nats-cluster.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function spec(stream: string): ShardLogSpec {
  return { stream, subject: `kith.log.${stream}`, replicas: 3, maxEntryBytes: 1 << 20, duplicateWindowMs: 120_000 };
}

/** Every entry of the log, in order. */
async function readAll(log: ShardLog): Promise<{ seq: number; text: string }[]> {
  const out: { seq: number; text: string }[] = [];
  for (;;) {
    const entries = await log.read(log.identity, out.length, { max: 256, waitMs: 1000 });
    if (entries.length === 0) return out;
    for (const e of entries) out.push({ seq: e.seq, text: decoder.decode(e.data) });
  }
}

describe('a shard log on a 3-server NATS cluster', () => {
  const fx = natsClusterPerSuite('kith-nats-');

  it('gives entries back in order from any position, and lands a retried message id once', async () => {
    const log = await ShardLog.open(fx.nc, spec('order'));
    const seqs: number[] = [];
    for (let i = 0; i < 40; i++) seqs.push(await log.append(encoder.encode(`entry ${i}`), `m${i}`));
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
    );
    // The same message id again (an append whose answer was lost): the first one's position, nothing added.
    assert.equal(await log.append(encoder.encode('entry 10, sent again'), 'm10'), 11);
    assert.equal((await log.state()).last, 40);

    const all = await readAll(log);
    assert.deepEqual(
      all.map((e) => e.text),
      seqs.map((_, i) => `entry ${i}`),
    );
    const tail = await log.read(log.identity, 25, { max: 100, waitMs: 1000 });
    assert.deepEqual(
      tail.map((e) => e.seq),
      Array.from({ length: 15 }, (_, i) => 26 + i),
    );
    // Nothing after the end: an empty read, not an error.
    assert.deepEqual(await log.read(log.identity, 40, { max: 10, waitMs: 1000 }), []);
  });

  it("loses no acknowledged entry and doubles none when the stream's leader is killed -9", async () => {
    const log = await ShardLog.open(fx.nc, spec('leaderkill'));
    const jsm = await jetstreamManager(fx.nc);
    const acked = new Map<string, number>();
    let longestAppendMs = 0;
    let killed = -1;
    let faults = Promise.resolve();
    // Four writers at once, so that appends are in flight when the leader dies: their retries
    // (same message id) must land once.
    const writer = async (w: number): Promise<void> => {
      for (let j = 0; acked.size < 160; j++) {
        const id = `w${w}-${j}`;
        const started = performance.now();
        acked.set(id, await log.append(encoder.encode(id), id));
        longestAppendMs = Math.max(longestAppendMs, performance.now() - started);
        if (acked.size === 40 && killed < 0) {
          killed = -2;
          faults = (async () => {
            killed = fx.cluster.indexOf(await streamLeader(jsm, 'leaderkill'));
            await fx.cluster.kill(killed);
          })();
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    await faults;
    assert.ok(killed >= 0, 'the leader was killed');
    await fx.cluster.restart(killed);
    const all = await readAll(log);
    const texts = all.map((e) => e.text);
    assert.equal(new Set(texts).size, texts.length, `an entry was stored twice: ${texts.join(',')}`);
    assert.equal(all.length, acked.size, `the log holds ${all.length} entries for ${acked.size} acknowledged appends`);
    for (const { seq, text } of all) assert.equal(acked.get(text), seq, `${text} is at ${seq}, acknowledged at ${acked.get(text)}`);
    process.stdout.write(`# leader ${fx.cluster.servers[killed]?.name} killed: the longest append waited ${Math.round(longestAppendMs)} ms\n`);
  });

  it('refuses to read after a position its log no longer holds', async () => {
    const first = await ShardLog.open(fx.nc, spec('regress'));
    for (let i = 0; i < 5; i++) await first.append(encoder.encode(`old ${i}`), `old${i}`);
    const oldIdentity = first.identity;

    // Behind: a replica that applied 9 of a log whose last entry is 5.
    await assert.rejects(first.read(oldIdentity, 9, { max: 10, waitMs: 1000 }), (error) => isKithError(error) && error.code === 'ERR_LOG_REGRESSION');

    // Deleted and made again, then filled past the old position: still not the same log.
    await (await jetstreamManager(fx.nc)).streams.delete('regress');
    const second = await ShardLog.open(fx.nc, spec('regress'));
    for (let i = 0; i < 8; i++) await second.append(encoder.encode(`new ${i}`), `new${i}`);
    assert.notEqual(second.identity.label, oldIdentity.label);
    await assert.rejects(
      second.read(oldIdentity, 5, { max: 10, waitMs: 1000 }),
      (error) => isKithError(error) && error.code === 'ERR_LOG_REGRESSION' && /deleted and made again/.test(error.message),
    );
    // The new log read from its own identity is fine.
    assert.equal((await second.read(second.identity, 5, { max: 10, waitMs: 1000 })).length, 3);
  });

  it('takes a duplicate answered at position 0 (a staged proposal) for no acknowledgement: asks again, looks for the entry, appends it anew', async () => {
    const log = await ShardLog.open(fx.nc, spec('staged'));
    const before = await log.append(encoder.encode('an entry stored before'), 'before-1');
    // The stream's leader is played by a plain subscriber on the log's subject, answering as
    // nats-server 2.10 does when a message id is staged at 0; the stream itself moves to another
    // subject, so it still answers reads and takes appends only from the test.
    const jsm = await jetstreamManager(fx.nc);
    const info = await jsm.streams.info('staged');
    await jsm.streams.update('staged', { ...info.config, subjects: ['kith.log.staged-moved'] });
    const store = async (text: string, id: string): Promise<number> =>
      (await jetstream(fx.nc).publish('kith.log.staged-moved', encoder.encode(text), { msgID: id })).seq;
    let answer: (id: string, asked: number) => { seq: number; duplicate?: boolean } = () => ({ seq: 0, duplicate: true });
    const asked: string[] = [];
    const responder = fx.nc.subscribe(log.spec.subject, {
      callback: (_error, message) => {
        const id = message.headers?.get('Nats-Msg-Id') ?? '';
        asked.push(id);
        message.respond(encoder.encode(JSON.stringify({ stream: 'staged', ...answer(id, asked.length) })));
      },
    });
    const quick = { stagedGiveUpMs: 300 };
    try {
      // Staged for a moment, then stored: the position, under the one id.
      answer = (_id, n) => (n < 3 ? { seq: 0, duplicate: true } : { seq: 7, duplicate: true });
      assert.equal(await log.append(encoder.encode('staged, then stored'), 'a-1', quick), 7);
      assert.deepEqual(asked, ['a-1', 'a-1', 'a-1'], 'asked again under the same id until a position came back');

      // Staged for good, but the entry is in the log (its proposal committed, its id's answer lost): found there, not appended again.
      asked.length = 0;
      const stored = await store('committed meanwhile', 'b-1');
      answer = () => ({ seq: 0, duplicate: true });
      assert.equal(await log.append(encoder.encode('committed meanwhile'), 'b-1', quick), stored);
      assert.deepEqual([...new Set(asked)], ['b-1'], 'never under another id');

      // Staged for good and in no entry (its proposal dropped): appended anew under a derived id.
      asked.length = 0;
      answer = (id) => (id === 'c-1' ? { seq: 0, duplicate: true } : { seq: 42 });
      assert.equal(await log.append(encoder.encode('dropped proposal'), 'c-1', quick), 42);
      assert.equal(asked.at(-1), 'c-1~2');
      assert.ok(asked.filter((id) => id === 'c-1').length >= 2);

      // Never anything but 0: an error after the attempts, never position 0.
      asked.length = 0;
      answer = () => ({ seq: 0, duplicate: true });
      await assert.rejects(log.append(encoder.encode('never stored'), 'd-1', { attempts: 3 }), (error) => isKithError(error) && error.code === 'ERR_STORAGE');
      assert.equal(asked.length, 3);
      assert.ok(before >= 1);
    } finally {
      responder.unsubscribe();
    }
  });

  it('makes its stream once JetStream can place it: asks again while servers are away, and answers 503 (not 500) when they stay away', async () => {
    // Two of three servers down: no quorum, so no stream of 3 replicas can be made.
    await fx.cluster.kill(1);
    await fx.cluster.kill(2);
    try {
      const started = Date.now();
      await assert.rejects(
        ShardLog.open(fx.nc, spec('settle-short'), 1500),
        (error) => isKithError(error) && error.code === 'ERR_UNAVAILABLE' && /settle-short/.test(error.message),
      );
      assert.ok(Date.now() - started >= 1500, 'it asked again for the time given before giving up');
      // The servers come back while it asks: it makes the stream, which then takes entries.
      const opening = ShardLog.open(fx.nc, spec('settle-long'), 60_000);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await Promise.all([fx.cluster.restart(1), fx.cluster.restart(2)]);
      const log = await opening;
      assert.equal(await log.append(encoder.encode('after the servers came back'), 'settle-1'), 1);
    } finally {
      // Whatever failed, the suite's cluster is whole again for what follows.
      for (const i of [1, 2]) if (fx.cluster.servers[i]?.process === null) await fx.cluster.restart(i);
    }
  });

  it('does not ask again when the request itself is refused (a bad name, a name taken by another stream)', async () => {
    const started = Date.now();
    // A stream of the name exists on another subject with another configuration: a 4xx, at once.
    await (await jetstreamManager(fx.nc)).streams.add({ name: 'taken', subjects: ['kith.other.taken'], num_replicas: 1 });
    await assert.rejects(ShardLog.open(fx.nc, { ...spec('taken'), replicas: 3 }, 30_000), (error) => isKithError(error) && error.code === 'ERR_INTERNAL');
    await assert.rejects(ShardLog.open(fx.nc, spec('bad.name'), 30_000), (error) => !isKithError(error));
    assert.ok(Date.now() - started < 10_000, `refused in ${Date.now() - started} ms, not asked again for 30 s`);
  });
});
