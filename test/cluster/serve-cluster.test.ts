/**
 * Three `kith serve -cluster-nats …` processes over three NATS servers, against one single-node
 * kith process fed the same writes (a model test over real sockets): the cluster's exact
 * search, scroll, count and retrieve must answer as the single node does. Also: read-your-writes
 * through another node, a node killed -9 during writes and searches, and the refusals.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SeededRng } from '../../src/core/rng.js';
import { testSeed } from '../helpers/data.js';
import { startKith } from '../helpers/kith-cli.js';
import { KithCluster } from '../helpers/kith-cluster.js';
import { natsClusterPerSuite } from '../helpers/nats-cluster.js';
import { httpJson, httpOk as ok, type ServerProcess, startServer } from '../helpers/server-process.js';

const IDS = ['7', '12', 'α', 'a/b', 'ünï', '0', 'x'.repeat(60), 'b', 'c', 'd', 'e', 'f', 'g', 'h', '300', '41'];
const PAYLOADS: Record<string, unknown>[] = [{}, { g: 0 }, { g: 1, s: 'x' }, { g: 2, n: null, b: true, l: [1, 'two', null], o: { k: 1.5 } }, { g: 1, e: '' }];
const DIM = 3;

// biome-ignore lint/suspicious/noExplicitAny: answers are compared field by field
type Json = any;

/** Drops what differs by design between a cluster and one node: versions (log positions there, a clock here). */
function withoutVersions(points: Json[]): Json[] {
  return points.map(({ version: _version, ...rest }: Json) => rest);
}

describe('a cluster of three kith processes', { timeout: 300_000 }, () => {
  const nats = natsClusterPerSuite('kith-serve-cluster-');
  let cluster: KithCluster;
  let single: ServerProcess;
  before(async () => {
    cluster = await KithCluster.start(nats.cluster, nats.dir, 3);
    single = await startServer(join(nats.dir, 'single.db'), ['-threads', '0']);
  });
  after(async () => {
    await cluster?.stop();
    await single?.stop();
  });

  test('answers exact search, scroll, count and retrieve as one node does, through any node', async (t) => {
    const seed = testSeed(2101);
    t.diagnostic(`seed ${seed}`);
    const rng = new SeededRng(seed);
    const pick = <T>(list: readonly T[]): T => list[rng.nextUint32() % list.length] as T;
    const config = { name: 'docs', vector_size: DIM, distance: 'dot' };
    const created = await ok(cluster.urls[0] as string, 'POST', '/collections', { ...config, shard_number: 3, replication_factor: 2 });
    assert.equal(created.result.cluster.shard_number, 3);
    assert.equal(created.result.cluster.replication_factor, 2);
    for (const nodes of created.result.cluster.placement) assert.equal(new Set(nodes).size, 2, 'two replicas of a shard on two distinct nodes');
    await ok(single.url, 'POST', '/collections', config);

    const compare = async (round: number): Promise<void> => {
      const through = pick(cluster.urls);
      const q = '?consistency=strong';
      const label = `seed ${seed}, round ${round}, through ${through}`;
      const count = await ok(through, 'POST', `/collections/docs/points/count${q}`, {});
      assert.equal(count.result.count, (await ok(single.url, 'POST', '/collections/docs/points/count', {})).result.count, `count, ${label}`);
      const filter = { must: [{ key: 'g', match: { value: round % 3 } }] };
      const filtered = await ok(through, 'POST', `/collections/docs/points/count${q}`, { filter });
      assert.equal(
        filtered.result.count,
        (await ok(single.url, 'POST', '/collections/docs/points/count', { filter })).result.count,
        `filtered count, ${label}`,
      );
      // The whole collection in pages of 3, in id order.
      const walk = async (base: string, suffix: string): Promise<Json[]> => {
        const out: Json[] = [];
        let cursor: string | null = null;
        do {
          const page: Json = await ok(base, 'POST', `/collections/docs/points/scroll${suffix}`, { limit: 3, cursor, with_vector: true });
          out.push(...page.result.points);
          cursor = page.result.next_cursor;
        } while (cursor !== null);
        return out;
      };
      assert.deepEqual(withoutVersions(await walk(through, q)), withoutVersions(await walk(single.url, '')), `scroll, ${label}`);
      for (const search of [
        { vector: [1, 1, 0], limit: 5, params: { exact: true } },
        { vector: [0, 2, 1], limit: 4, offset: 2, params: { exact: true }, with_vector: true },
        { vector: [1, 0, 3], limit: 10, filter, params: { exact: true } },
      ]) {
        const got = await ok(through, 'POST', `/collections/docs/points/search${q}`, search);
        const want = await ok(single.url, 'POST', '/collections/docs/points/search', search);
        assert.deepEqual(withoutVersions(got.result), withoutVersions(want.result), `search ${JSON.stringify(search)}, ${label}`);
      }
      const ids = [pick(IDS), pick(IDS), pick(IDS), 'never'];
      const got = await ok(through, 'POST', `/collections/docs/points/retrieve${q}`, { ids, with_vector: true });
      const want = await ok(single.url, 'POST', '/collections/docs/points/retrieve', { ids, with_vector: true });
      assert.deepEqual(withoutVersions(got.result), withoutVersions(want.result), `retrieve ${JSON.stringify(ids)}, ${label}`);
    };

    // Writes by kind and outcome: the run must have met vector updates, accepted and refused.
    const counts: Record<string, number> = {};
    for (let step = 1; step <= 60; step++) {
      const through = pick(cluster.urls);
      // Every tenth write is a vector update (every twentieth naming a point that never exists).
      const roll = step % 10 === 0 ? 12 : rng.nextUint32() % 13;
      let method: string;
      let path: string;
      let body: unknown;
      if (roll < 6) {
        const points = Array.from({ length: 1 + (rng.nextUint32() % 5) }, () => {
          const kind = rng.nextUint32() % 3;
          const vector = kind === 0 ? [0, 0, 0] : kind === 1 ? [1, 1, 0] : Array.from({ length: DIM }, () => rng.nextUint32() % 4);
          return { id: pick(IDS), vector, payload: pick(PAYLOADS) };
        });
        // Some conditional: the answer's `upserted` then counts what the replicas admitted.
        const condition = rng.nextUint32() % 6;
        const options =
          condition === 0
            ? { update_mode: 'insert_only' }
            : condition === 1
              ? { update_mode: 'update_only' }
              : condition === 2
                ? { update_filter: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] } }
                : {};
        [method, path, body] = ['PUT', '/collections/docs/points', { points, ...options }];
      } else if (roll < 8) {
        [method, path, body] = ['POST', '/collections/docs/points/delete', { points: [pick(IDS), pick(IDS), 'never'] }];
      } else if (roll < 9) {
        [method, path, body] = ['POST', '/collections/docs/points/delete', { filter: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] } }];
      } else if (roll < 11) {
        [method, path, body] = [
          'POST',
          '/collections/docs/points/payload',
          { payload: { tag: rng.nextUint32() % 4 }, filter: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] } },
        ];
      } else if (roll === 12) {
        // New vectors for listed points: a missing one is a 404 on both, and nothing changes.
        const points = Array.from({ length: 1 + (rng.nextUint32() % 3) }, (_, i) => ({
          id: step % 20 === 0 && i === 0 ? 'never' : pick(IDS),
          vector: Array.from({ length: DIM }, () => rng.nextUint32() % 4),
        }));
        // Half of them conditional: the answer's `updated` then counts what the replicas admitted.
        const condition = rng.nextUint32() % 2 === 0 ? { update_filter: { must: [{ key: 'g', match: { value: rng.nextUint32() % 3 } }] } } : {};
        [method, path, body] = ['PUT', '/collections/docs/points/vectors', { points, ...condition }];
      } else {
        [method, path, body] = ['POST', '/collections/docs/points/payload/clear', { filter: { must: [{ key: 's', match: { value: 'x' } }] } }];
      }
      const got = await httpJson(through, method, path, body);
      const want = await httpJson(single.url, method, path, body);
      assert.equal(got.status, want.status, `step ${step} ${method} ${path} (seed ${seed}): ${got.raw} vs ${want.raw}`);
      counts[`${path} ${want.status}`] = (counts[`${path} ${want.status}`] ?? 0) + 1;
      if (want.status !== 200) {
        assert.equal(got.body.status.code, want.body.status.code, `step ${step}: the same refusal (seed ${seed})`);
      } else {
        const { write_token: token, ...answer } = got.body.result;
        assert.deepEqual(answer, want.body.result, `step ${step}: the cluster's answer (seed ${seed})`);
        assert.match(token, /^\d+:\d+(,\d+:\d+)*$/, 'a write answers with its token');
        assert.equal(got.headers.get('kith-write-token'), token);
      }
      if (step % 15 === 0) await compare(step);
    }
    t.diagnostic(`writes: ${JSON.stringify(counts)}`);
    assert.ok((counts['/collections/docs/points/vectors 200'] ?? 0) > 0 && (counts['/collections/docs/points/vectors 404'] ?? 0) > 0, JSON.stringify(counts));
    // Each node's metrics show its replicas (positions, lag, serving, entries applied) and its appends.
    for (const node of cluster.nodes) {
      const text = await (await fetch(`${node.url}/metrics`)).text();
      const held = (await ok(node.url, 'GET', '/cluster')).result.replicas.filter((r: Json) => r.collection === 'docs');
      assert.equal(held.length, 2, `${node.id} holds two of the six replicas`);
      for (const replica of held) {
        const labels = `{collection="docs",shard="${replica.shard}"}`;
        const applied = Number(new RegExp(`^kith_replica_applied_position${labels.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1]);
        assert.ok(applied > 0, `${node.id}: kith_replica_applied_position${labels} in\n${text.slice(0, 2000)}`);
        for (const name of ['kith_replica_lag', 'kith_replica_serving', 'kith_replica_log_position', 'kith_replica_entries_applied_total'])
          assert.ok(text.includes(`${name}${labels}`), `${node.id}: ${name}${labels}`);
      }
      assert.match(text, /^kith_log_append_seconds_count \d+$/m);
    }
  });

  test('a session read through another node sees the write at once', async () => {
    await ok(cluster.urls[0] as string, 'POST', '/collections', {
      name: 'session',
      vector_size: 2,
      distance: 'cosine',
      shard_number: 2,
      replication_factor: 1,
    });
    for (let i = 0; i < 10; i++) {
      const [writer, reader] = [cluster.urls[i % 3] as string, cluster.urls[(i + 1) % 3] as string];
      const id = `p${i}`;
      const written = await ok(writer, 'PUT', '/collections/session/points', { points: [{ id, vector: [1, i], payload: { i } }] });
      const token = written.result.write_token as string;
      const read = await ok(reader, 'POST', `/collections/session/points/retrieve?after=${encodeURIComponent(token)}`, { ids: [id] });
      assert.deepEqual(
        read.result.map((p: Json) => p.payload),
        [{ i }],
        `write ${i} through ${writer}, read through ${reader}`,
      );
    }
    const bad = await httpJson(cluster.urls[0] as string, 'POST', '/collections/session/points/count?after=zzz', {});
    assert.equal(bad.status, 400);
    assert.match(bad.body.status.error, /after/);
  });

  test('kith cluster status, replicate and drop against a node; --db refused', async () => {
    const url = cluster.urls[0] as string;
    const status = await startKith(['cluster', 'status', '--url', url]).ended;
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^node n1$/m);
    for (const id of ['n1', 'n2', 'n3']) assert.match(status.stdout, new RegExp(`^${id} +http://127\\.0\\.0\\.1:\\d+ `, 'm'));
    assert.match(status.stdout, /^docs +\d +serving +\d+ +\d+ +0 *$/m);
    const info = await ok(url, 'GET', '/collections/session');
    const holder = info.result.cluster.placement[0][0] as string;
    const other = ['n1', 'n2', 'n3'].find((id) => id !== holder) as string;
    const added = await startKith(['cluster', 'replicate', 'session', '0', other, '--url', url]).ended;
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, new RegExp(`^0 +(${holder}, ${other}|${other}, ${holder})$`, 'm'));
    const dropped = await startKith(['cluster', 'drop', 'session', '0', holder, '--url', url]).ended;
    assert.equal(dropped.code, 0, dropped.stderr);
    assert.match(dropped.stdout, new RegExp(`^0 +${other}$`, 'm'));
    const count = await ok(cluster.urls[2] as string, 'POST', '/collections/session/points/count?consistency=strong', {});
    assert.equal(count.result.count, 10, 'the points of shard 0 moved with it');
    const last = await startKith(['cluster', 'drop', 'session', '0', other, '--url', url]).ended;
    assert.equal(last.code, 1);
    assert.match(last.stderr, /last replica/);
    const file = await startKith(['cluster', 'status', '--db', 'x.db']).ended;
    assert.equal(file.code, 2);
    assert.match(file.stderr, /--url/);
  });

  test("one node's query and searches by examples: a 400 saying so, not a 404", async () => {
    const url = cluster.urls[1] as string;
    for (const [path, body, words] of [
      ['query', { point: 1 }, /multi-stage queries .* single node only/],
      ['recommend', { positive: [1] }, /recommendations are served by a single node only/],
      ['recommend/batch', { searches: [{ positive: [1] }] }, /recommendations/],
      ['discover', { target: 1 }, /discovery and context searches/],
    ] as const) {
      const answer = await httpJson(url, 'POST', `/collections/docs/points/${path}`, body);
      assert.equal(answer.status, 400, `${path}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.status.code, 'ERR_BAD_INPUT');
      assert.match(answer.body.status.error, words);
    }
  });
});
