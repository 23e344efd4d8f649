/**
 * Seeded sequences of operations on a kith collection and on the model (collection-model.ts):
 * the configuration a seed picks, the operations it generates, applying them to both, the
 * comparisons after every step, the failure report (seed, configuration, step, operation log) and
 * a minimiser that replays ever smaller subsets of a failing log.
 *
 * Operations are generated from the model's state just before they run, and are concrete (ids,
 * vectors, payloads, thresholds written out), so a recorded log replays without the generator.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SeededRng } from '../../src/core/rng.js';
import { type Collection, Database, parseFilter, type SearchInput } from '../../src/lib.js';
import type { WithPayload } from './collection-model.js';
import {
  bigintJson,
  checkDeleted,
  checkGets,
  checking,
  checkSearch,
  fail,
  type Metric,
  Model,
  ModelFailure,
  type ModelPoint,
  showId,
} from './collection-model.js';
import type { JsonObject } from './filter-reference.js';
import { refFilter } from './filter-reference.js';
import {
  drawFilter,
  drawPayload,
  drawVector,
  EXACT_FAMILIES,
  FAMILIES,
  type IdKind,
  idKey,
  idPool,
  type PoolId,
  type RawId,
  type VectorFamily,
  type VectorGen,
  vectorGen,
} from './nasty-data.js';

// ---------------------------------------------------------------------------------------------
// Configuration.

/** Every generator and operation KITH_MODEL_OFF can switch off. */
export const SWITCHES = [
  'numeric-ids',
  'control-ids',
  'long-ids',
  'lookalike-ids',
  'uuid-ids',
  'duplicates',
  'zero',
  'tiny',
  'nonneg',
  'nasty-payload',
  'reupsert',
  'batch-repeats',
  'delete-ids',
  'delete-filter',
  'update-vectors',
  'conditional-upsert',
  'restart',
  'bad-input',
  'graph-filtered',
  'threshold',
  'offset',
] as const;

const ID_SWITCHES: ReadonlyArray<[string, IdKind]> = [
  ['numeric-ids', 'numeric'],
  ['control-ids', 'control'],
  ['long-ids', 'long-unicode'],
  ['lookalike-ids', 'lookalike'],
  ['uuid-ids', 'uuid'],
];

const METRICS: readonly Metric[] = ['cosine', 'euclid', 'dot'];

/** The twelve index × metric × quantization combinations, in seed order (seed % 12). */
export const CONFIG_NAMES: readonly string[] = [false, true].flatMap((hnsw) =>
  METRICS.flatMap((metric) => ['none', 'sq8'].map((q) => `${hnsw ? 'hnsw' : 'flat'}-${metric}-${q}`)),
);

export interface SeqConfig {
  readonly seed: number;
  readonly name: string;
  readonly hnsw: boolean;
  readonly metric: Metric;
  readonly sq8: boolean;
  readonly dim: number;
  readonly m: number;
  readonly efConstruction: number;
  readonly efSearch: number;
  readonly payloadIndex: boolean;
  /** Search threads of the database: searches go through searchParallel when above 0. */
  readonly threads: number;
  readonly family: VectorFamily;
  /** Scores exact in float32 (see collection-model.ts). */
  readonly exact: boolean;
  readonly steps: number;
  readonly maxBatch: number;
  readonly pool: readonly PoolId[];
  readonly vectors: VectorGen;
  readonly off: ReadonlySet<string>;
}

export interface RunOptions {
  /** Substrings of configuration names to draw from (KITH_MODEL_CONFIG); empty: all. */
  readonly configs: readonly string[];
  readonly off: ReadonlySet<string>;
  readonly steps: number;
  readonly poolMax: number;
  readonly maxBatch: number;
  /** Search threads (KITH_MODEL_THREADS); undefined: 0, 1 or 2 by seed, so the suite runs all three. */
  readonly threads?: number;
}

/** The configuration a seed stands for: index, metric and quantization from seed % 12, the vector family from seed % 5, the rest drawn. */
export function configFor(seed: number, options: RunOptions): SeqConfig {
  const names = CONFIG_NAMES.filter((n) => options.configs.length === 0 || options.configs.some((c) => n.includes(c)));
  if (names.length === 0) throw new Error(`KITH_MODEL_CONFIG=${options.configs.join(',')} matches none of ${CONFIG_NAMES.join(', ')}`);
  const name = names[seed % names.length] as string;
  const [index, metric, q] = name.split('-') as [string, Metric, string];
  const rng = new SeededRng(seed);
  const off = options.off;
  const families = FAMILIES.filter((f) => !(f === 'nonneg' && off.has('nonneg')) && !(f === 'dupes' && off.has('duplicates')));
  const family = families[seed % families.length] as VectorFamily;
  const dim = rng.pick([1, 2, 2, 3, 4, 4, 8, 16]);
  const kinds = new Set<IdKind>(['plain']);
  for (const [s, kind] of ID_SWITCHES) if (!off.has(s)) kinds.add(kind);
  const poolSize = 12 + rng.int(Math.max(1, options.poolMax - 11));
  return {
    seed,
    name,
    hnsw: index === 'hnsw',
    metric,
    sq8: q === 'sq8',
    dim,
    m: rng.pick([2, 2, 3, 4, 8, 16]),
    efConstruction: rng.pick([4, 8, 16, 64, 200]),
    efSearch: rng.pick([1, 2, 4, 16, 64]),
    payloadIndex: rng.next() < 0.8,
    threads: options.threads ?? seed % 3,
    family,
    exact: EXACT_FAMILIES.has(family) && q === 'none' && metric !== 'cosine',
    steps: options.steps,
    maxBatch: options.maxBatch,
    pool: idPool(rng, poolSize, kinds),
    vectors: vectorGen(rng, family, dim, off),
    off,
  };
}

/** The configuration as it prints in a failure. */
export function describeConfig(c: SeqConfig): string {
  const kinds = [...new Set(c.pool.map((p) => p.kind))].join('/');
  const index = c.hnsw ? `m ${c.m}, ef_construction ${c.efConstruction}, ef_search ${c.efSearch}, ` : '';
  return `${c.name}, dim ${c.dim}, ${index}payload_index ${c.payloadIndex}, threads ${c.threads}, vectors ${c.family}${c.exact ? ' (exact scores)' : ''}, pool of ${c.pool.length} ids (${kinds})${c.off.size > 0 ? `, off: ${[...c.off].join(',')}` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Operations.

export interface UpsertPoint {
  readonly id: RawId;
  readonly vector: number[];
  readonly payload: JsonObject;
  /** How it was made, for the log. */
  readonly how: 'new' | 'new-vector' | 'payload-only' | 'same-again' | 'batch-repeat';
}

export interface SearchSpec {
  readonly query: number[];
  readonly filter?: JsonObject;
  readonly limit: number;
  readonly offset: number;
  readonly threshold?: number;
  readonly ef?: number;
  readonly exact?: boolean;
  readonly strategy?: 'graph-filtered' | 'candidates-exact' | 'flat-scan';
  readonly walk?: 'two-hop' | 'plain';
  readonly withPayload: WithPayload;
  readonly withVector: boolean;
}

export type Op =
  /** `mode` / `condition`: a conditional upsert (Qdrant's update_mode, update_filter): only the admitted points are written. */
  | { kind: 'upsert'; points: UpsertPoint[]; mode?: 'insert_only' | 'update_only'; condition?: JsonObject }
  | { kind: 'upsert-bad'; points: Array<{ id: unknown; vector: unknown; payload?: unknown }>; bad: string }
  | { kind: 'delete-ids'; ids: RawId[] }
  | { kind: 'delete-filter'; filter: JsonObject }
  /**
   * New vectors for listed ids (repeats allowed: the last wins); `missing`: one id that does not
   * exist, so nothing may change; `condition`: Qdrant's update_filter, only points whose payload
   * matches it get theirs.
   */
  | { kind: 'update-vectors'; points: Array<{ id: RawId; vector: number[] }>; missing: boolean; condition?: JsonObject }
  | { kind: 'search'; search: SearchSpec }
  | { kind: 'restart' };

export interface Step {
  readonly op: Op;
  /** Searches run after the step, besides the gets (drawn from `sampleSeed`). */
  readonly checks: SearchSpec[];
  readonly sampleSeed: number;
}

/** The ids of one pool entry, in a random spelling. */
const spell = (rng: SeededRng, p: PoolId): RawId => rng.pick(p.raws);

function livePool(config: SeqConfig, model: Model): PoolId[] {
  return config.pool.filter((p) => model.points.has(p.key));
}

function drawUpsert(rng: SeededRng, config: SeqConfig, model: Model, first = false): Op {
  const live = livePool(config, model);
  // The first batch fills half the pool at once, so graphs have lists to overflow from the start.
  const count = first ? Math.ceil(config.pool.length / 2) : 1 + rng.int(rng.next() < 0.6 ? Math.min(4, config.maxBatch) : config.maxBatch);
  const points: UpsertPoint[] = [];
  for (let i = 0; i < count; i++) {
    const earlier = points[rng.int(points.length)];
    if (earlier !== undefined && rng.next() < 0.12 && !config.off.has('batch-repeats')) {
      // The same id again in the batch (maybe spelled differently): the last one wins.
      const entry = config.pool.find((p) => p.key === idKey(earlier.id)) as PoolId;
      points.push({ id: spell(rng, entry), vector: drawVector(rng, config.vectors), payload: drawPayload(rng, config.off), how: 'batch-repeat' });
      continue;
    }
    const reuse = live.length > 0 && rng.next() < 0.45 && !config.off.has('reupsert');
    const entry = reuse ? rng.pick(live) : rng.pick(config.pool);
    const old = model.points.get(entry.key);
    const id = spell(rng, entry);
    if (old === undefined || config.off.has('reupsert')) {
      points.push({ id, vector: drawVector(rng, config.vectors), payload: drawPayload(rng, config.off), how: old === undefined ? 'new' : 'new-vector' });
      continue;
    }
    const r = rng.next();
    if (r < 0.3) points.push({ id, vector: [...old.input], payload: drawPayload(rng, config.off), how: 'payload-only' });
    else if (r < 0.45) points.push({ id, vector: [...old.input], payload: structuredClone(old.payload), how: 'same-again' });
    else points.push({ id, vector: drawVector(rng, config.vectors), payload: drawPayload(rng, config.off), how: 'new-vector' });
  }
  // One batch in eight (after the first) is conditional: a mode, a filter on the points as they are, or both.
  if (first || config.off.has('conditional-upsert') || rng.next() >= 0.125) return { kind: 'upsert', points };
  const roll = rng.int(4);
  const mode = roll === 0 ? 'insert_only' : roll === 1 ? 'update_only' : undefined;
  const condition = roll >= 2 || rng.next() < 0.3 ? drawFilter(rng, config.off) : undefined;
  return { kind: 'upsert', points, ...(mode === undefined ? {} : { mode }), ...(condition === undefined ? {} : { condition }) };
}

/** A batch with one bad point among good ones: it must be refused whole. */
function drawBadUpsert(rng: SeededRng, config: SeqConfig, model: Model): Op {
  const good = (drawUpsert(rng, config, model) as { points: UpsertPoint[] }).points.map((p) => ({ id: p.id, vector: p.vector, payload: p.payload }));
  const bads: Array<[string, { id: unknown; vector: unknown; payload?: unknown }]> = [
    ['a vector one component too long', { id: 'bad-dim', vector: new Array(config.dim + 1).fill(1) }],
    ['id of 1025 bytes', { id: `${'é'.repeat(512)}x`, vector: new Array(config.dim).fill(1) }],
    ['id with a lone surrogate', { id: `a\uD800b`, vector: new Array(config.dim).fill(1) }],
    ['negative numeric id', { id: -7, vector: new Array(config.dim).fill(1) }],
    ['NaN component', { id: 'bad-nan', vector: new Array(config.dim).fill(Number.NaN) }],
    ['component 1e17', { id: 'bad-big', vector: new Array(config.dim).fill(1e17) }],
    ['payload an array', { id: 'bad-payload', vector: new Array(config.dim).fill(1), payload: [1] }],
    ['payload with __proto__', { id: 'bad-proto', vector: new Array(config.dim).fill(1), payload: JSON.parse('{"__proto__":{"x":1}}') }],
  ];
  const [bad, point] = rng.pick(bads);
  good.splice(rng.int(good.length + 1), 0, point as { id: RawId; vector: number[]; payload: JsonObject });
  return { kind: 'upsert-bad', points: good, bad };
}

function drawDeleteIds(rng: SeededRng, config: SeqConfig, model: Model): Op {
  const live = livePool(config, model);
  const ids: RawId[] = [];
  const count = 1 + rng.int(6);
  for (let i = 0; i < count; i++) {
    const r = rng.next();
    if (r < 0.6 && live.length > 0) ids.push(spell(rng, rng.pick(live)));
    else if (r < 0.9) ids.push(spell(rng, rng.pick(config.pool)));
    else if (ids.length > 0) ids.push(rng.pick(ids));
    else ids.push(`never-${rng.int(100)}`);
  }
  return { kind: 'delete-ids', ids };
}

/** New vectors for 1–4 live points (an id again a tenth of the time); one in eight lists an id that does not exist. */
function drawUpdateVectors(rng: SeededRng, config: SeqConfig, model: Model): Op {
  const live = livePool(config, model);
  const points: Array<{ id: RawId; vector: number[] }> = [];
  for (let i = 1 + rng.int(4); i > 0; i--) {
    const earlier = points[rng.int(points.length)];
    const id = earlier !== undefined && rng.next() < 0.1 ? earlier.id : spell(rng, rng.pick(live));
    points.push({ id, vector: drawVector(rng, config.vectors) });
  }
  const missing = rng.next() < 0.125;
  if (missing) {
    const absent = config.pool.filter((p) => !model.points.has(p.key));
    points.splice(rng.int(points.length + 1), 0, {
      id: absent.length > 0 ? spell(rng, rng.pick(absent)) : `never-${rng.int(100)}`,
      vector: drawVector(rng, config.vectors),
    });
  }
  // One in four is conditional (a filter on the payloads as they are), unless conditional writes are off.
  const condition = !config.off.has('conditional-upsert') && rng.next() < 0.25 ? drawFilter(rng, config.off) : undefined;
  return { kind: 'update-vectors', points, missing, ...(condition === undefined ? {} : { condition }) };
}

/** A query: a stored point's own input a third of the time, else a fresh vector of the family. */
function drawQuery(rng: SeededRng, config: SeqConfig, model: Model): number[] {
  const live = [...model.points.values()];
  if (live.length > 0 && rng.next() < 0.3) return [...(rng.pick(live) as ModelPoint).input];
  return drawVector(rng, config.vectors);
}

export type SearchPurpose = 'random' | 'unfiltered-high-ef' | 'filtered-high-ef' | 'planned' | 'configured-ef';

/** Search parameters: limits around the point count, thresholds at real scores, ef low or high. */
export function drawSearch(rng: SeededRng, config: SeqConfig, model: Model, purpose: SearchPurpose): SearchSpec {
  const off = config.off;
  const n = model.points.size;
  const query = drawQuery(rng, config, model);
  const filtered = purpose === 'filtered-high-ef' || (purpose === 'random' && rng.next() < 0.5) || (purpose === 'planned' && rng.next() < 0.8);
  const filter = filtered ? drawFilter(rng, off) : undefined;
  const limit = Math.min(10000, rng.next() < 0.3 ? 1 + rng.int(3) : 1 + rng.int(n + 4));
  const offset = !off.has('offset') && rng.next() < 0.2 ? rng.int(n + 2) : 0;
  let threshold: number | undefined;
  if (purpose === 'random' && !off.has('threshold') && rng.next() < 0.25) {
    const keys = [...model.points.keys()];
    const at = keys.length > 0 ? model.roughScore(query, rng.pick(keys)) : undefined;
    threshold = at ?? (config.metric === 'euclid' ? rng.int(5) : rng.int(7) - 3);
  }
  const highEf = Math.min(10000, Math.max(4 * n + 4, 16));
  let ef: number | undefined;
  let exact: boolean | undefined;
  let strategy: SearchSpec['strategy'];
  let walk: SearchSpec['walk'];
  if (purpose === 'unfiltered-high-ef') ef = highEf;
  else if (purpose === 'filtered-high-ef') {
    ef = highEf;
    // A plain walk at ef ≥ the point count visits every reachable node: it must be exact.
    if (config.hnsw && !off.has('graph-filtered')) [strategy, walk] = ['graph-filtered', 'plain'];
  } else if (purpose === 'random') {
    const r = rng.next();
    ef = r < 0.3 ? 1 + rng.int(8) : r < 0.6 ? highEf : undefined;
    exact = rng.next() < 0.1 ? true : undefined;
    if (filter !== undefined && config.hnsw) {
      const s = rng.next();
      if (s < 0.4 && !off.has('graph-filtered')) [strategy, walk] = ['graph-filtered', rng.pick(['two-hop', 'plain'] as const)];
      else if (s < 0.5) strategy = 'candidates-exact';
      else if (s < 0.6) strategy = 'flat-scan';
    }
  }
  const w = rng.next();
  // Paths into the nested payloads of nasty-data.ts, and literal top-level keys with dots in them.
  const paths = (): string[] => ['a', 'a.b', 'a.n', 'c[].c', 'c[].a', 'b.c', 'a.b.c', 'n', 'x', ''].filter(() => rng.next() < 0.3);
  const withPayload: WithPayload =
    w < 0.55 ? true : w < 0.7 ? false : w < 0.8 ? ['a', 'n', 'x', ''].filter(() => rng.next() < 0.5) : w < 0.9 ? { include: paths() } : { exclude: paths() };
  const spec: SearchSpec = { query, limit, offset, withPayload, withVector: rng.next() < 0.25 };
  return {
    ...spec,
    ...(filter !== undefined ? { filter } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
    ...(ef !== undefined ? { ef } : {}),
    ...(exact !== undefined ? { exact } : {}),
    ...(strategy !== undefined ? { strategy } : {}),
    ...(walk !== undefined ? { walk } : {}),
  };
}

function drawStep(rng: SeededRng, config: SeqConfig, model: Model, index: number): Step {
  const off = config.off;
  let op: Op;
  const r = rng.next();
  if (index === 0 || model.points.size === 0 || r < 0.4) op = drawUpsert(rng, config, model, index === 0);
  else if (r < 0.5 && !off.has('delete-ids')) op = drawDeleteIds(rng, config, model);
  else if (r < 0.56 && !off.has('delete-filter')) op = { kind: 'delete-filter', filter: rng.next() < 0.04 ? {} : drawFilter(rng, off) };
  else if (r < 0.64 && !off.has('restart')) op = { kind: 'restart' };
  else if (r < 0.67 && !off.has('bad-input')) op = drawBadUpsert(rng, config, model);
  else if (r < 0.71 && !off.has('update-vectors')) op = drawUpdateVectors(rng, config, model);
  else if (r < 0.9) op = { kind: 'search', search: drawSearch(rng, config, model, 'random') };
  else op = drawUpsert(rng, config, model);
  // The checks are drawn after the model has taken the op: see runSteps.
  return { op, checks: [], sampleSeed: rng.nextUint32() };
}

function drawChecks(rng: SeededRng, config: SeqConfig, model: Model): SearchSpec[] {
  const purposes: SearchPurpose[] = config.hnsw
    ? ['unfiltered-high-ef', 'filtered-high-ef', 'planned', 'configured-ef']
    : ['unfiltered-high-ef', 'filtered-high-ef'];
  return purposes.map((p) => drawSearch(rng, config, model, p));
}

// ---------------------------------------------------------------------------------------------
// Running.

/** What a search spec means for kith (the request) and for the model (what it may demand). */
function toRequest(spec: SearchSpec): SearchInput {
  const params: NonNullable<SearchInput['params']> = {
    ...(spec.ef !== undefined ? { ef: spec.ef } : {}),
    ...(spec.exact !== undefined ? { exact: spec.exact } : {}),
    ...(spec.strategy !== undefined ? { strategy: spec.strategy } : {}),
    ...(spec.walk !== undefined ? { filter_walk: spec.walk } : {}),
  };
  return {
    vector: spec.query,
    limit: spec.limit,
    offset: spec.offset,
    ...(spec.filter !== undefined ? { filter: parseFilter(spec.filter) } : {}),
    ...(spec.threshold !== undefined ? { score_threshold: spec.threshold } : {}),
    with_payload: spec.withPayload,
    with_vector: spec.withVector,
    params,
  };
}

/**
 * What kith must answer exactly: Flat always; HNSW when it says the answer is exact, when `ef`
 * covers every point on an unfiltered search or a plain filtered walk (every live point must stay
 * reachable, so the beam, never full, visits them all).
 */
function demandOf(config: SeqConfig, spec: SearchSpec, exactAnswer: boolean, n: number): 'exact' | 'reachable' {
  if (!config.hnsw || exactAnswer) return 'exact';
  const coversAll = spec.ef !== undefined && spec.ef >= 4 * n;
  const walksAll = spec.filter === undefined || (spec.strategy === 'graph-filtered' && spec.walk === 'plain');
  return coversAll && walksAll ? 'exact' : 'reachable';
}

interface Live {
  db: Database;
  c: Collection;
  readonly path: string;
  /** What the sequence exercised (operations, searches by demand and strategy), for the test output. */
  readonly stats: Map<string, number>;
}

const count = (stats: Map<string, number>, key: string): void => {
  stats.set(key, (stats.get(key) ?? 0) + 1);
};

const COLLECTION = 'model';

async function createCollection(config: SeqConfig, path: string): Promise<Live> {
  const db = Database.open(path, { threads: config.threads });
  await db.createCollection({
    name: COLLECTION,
    vector_size: config.dim,
    distance: config.metric,
    hnsw: config.hnsw,
    parameters: { m: config.m, ef_construction: config.efConstruction, ef_search: config.efSearch },
    quantization: config.sq8 ? 'sq8' : 'none',
    payload_index: config.payloadIndex,
  });
  return { db, c: db.collection(COLLECTION), path, stats: new Map() };
}

/** Reads every live point not read since its vector changed (the model scores from them). */
function observeStored(live: Live, model: Model, where: string): void {
  const unread = [...model.points.values()].filter((p) => p.stored === undefined).map((p) => p.key);
  checkGets(live.c, model, unread, where);
}

async function applyOp(live: Live, model: Model, config: SeqConfig, op: Op, where: string): Promise<RawId[]> {
  const c = live.c;
  switch (op.kind) {
    case 'upsert': {
      // The points written: the last of each id, admitted by the mode and condition as the model is now.
      const last = new Map<string, UpsertPoint>();
      for (const p of op.points) last.set(idKey(p.id), p);
      const admitted = [...last.values()].filter((p) => {
        const old = model.points.get(idKey(p.id));
        if (old === undefined) return op.mode !== 'update_only';
        return op.mode !== 'insert_only' && (op.condition === undefined || refFilter(op.condition, old.payload));
      });
      const admittedKeys = new Set(admitted.map((p) => idKey(p.id)));
      if (op.mode !== undefined || op.condition !== undefined)
        count(live.stats, `conditional upsert, ${admitted.length < last.size ? 'some' : 'none'} passed over`);
      let result: { upserted: number };
      try {
        result = await c.upsert(
          op.points.map((p) => ({ id: p.id, vector: p.vector, payload: structuredClone(p.payload) })),
          { ...(op.mode === undefined ? {} : { mode: op.mode }), ...(op.condition === undefined ? {} : { condition: op.condition }) },
        );
      } catch (error) {
        fail('upsert.error', `${where}: upsert threw ${String(error)}`);
      }
      checking('upsert.count', () => {
        if (result.upserted !== admitted.length) throw new Error(`${where}: upserted ${result.upserted}, ${admitted.length} admitted of the distinct ids sent`);
      });
      if (admitted.length === 0) return op.points.map((p) => p.id);
      const first = admitted[0] as UpsertPoint;
      let version: bigint;
      try {
        version = c.getPoint(first.id).version;
      } catch (error) {
        fail('get.missing', `${where}: getPoint(${showId(first.id)}) right after its upsert threw ${String(error)}`);
      }
      if (!(version > model.lastVersion)) fail('upsert.version', `${where}: batch version ${version} not above the previous ${model.lastVersion}`);
      model.lastVersion = version;
      for (const p of op.points) {
        if (!admittedKeys.has(idKey(p.id))) continue;
        const key = idKey(p.id);
        const old = model.points.get(key);
        const same =
          old !== undefined && old.input.length === p.vector.length && old.input.every((x, i) => Math.fround(x) === Math.fround(p.vector[i] as number));
        model.points.set(key, { key, input: [...p.vector], payload: structuredClone(p.payload), version, stored: same ? old.stored : undefined });
      }
      return op.points.map((p) => p.id);
    }
    case 'upsert-bad': {
      let refused: unknown;
      try {
        await c.upsert(op.points as never);
      } catch (error) {
        refused = error;
      }
      const code = (refused as { code?: unknown } | undefined)?.code;
      if (code !== 'ERR_BAD_INPUT')
        fail(
          'bad-input',
          `${where}: a batch with ${op.bad} gave ${refused === undefined ? 'success' : `${String(code)} ${String(refused)}`}, expected ERR_BAD_INPUT`,
        );
      // The good points of the batch, and the bad point's id when it is a valid one: none may exist now.
      return op.points
        .map((p) => p.id)
        .filter((id): id is RawId => (typeof id === 'string' && id.isWellFormed() && Buffer.byteLength(id) <= 1024) || (typeof id === 'number' && id >= 0));
    }
    case 'delete-ids': {
      const keys = [...new Set(op.ids.map(idKey))].filter((k) => model.points.has(k));
      let result: { deleted: number };
      try {
        result = await c.deleteIds(op.ids.map(String));
      } catch (error) {
        fail('delete.error', `${where}: deleteIds threw ${String(error)}`);
      }
      checkDeleted(result, keys.length, where);
      for (const k of keys) model.points.delete(k);
      return op.ids;
    }
    case 'delete-filter': {
      const keys = [...model.points.values()].filter((p) => refFilter(op.filter, p.payload)).map((p) => p.key);
      const filter = parseFilter(op.filter) ?? fail('model', 'an empty filter parsed to nothing');
      let result: { deleted: number };
      try {
        result = await c.deleteByFilter(filter);
      } catch (error) {
        fail('delete.error', `${where}: deleteByFilter threw ${String(error)}`);
      }
      checkDeleted(result, keys.length, where);
      for (const k of keys) model.points.delete(k);
      return keys;
    }
    case 'update-vectors': {
      let outcome: { updated: number } | { code: unknown };
      try {
        outcome = await c.updateVectors(
          op.points.map((p) => ({ id: p.id, vector: [...p.vector] })),
          op.condition === undefined ? {} : { condition: op.condition },
        );
      } catch (error) {
        outcome = { code: (error as { code?: unknown }).code ?? String(error) };
      }
      const distinct = new Set(op.points.map((p) => idKey(p.id)));
      if (op.missing) {
        if (!('code' in outcome) || outcome.code !== 'ERR_POINT_NOT_FOUND')
          fail('update-vectors.missing', `${where}: an update naming a missing id gave ${JSON.stringify(outcome)}, expected ERR_POINT_NOT_FOUND`);
        // Nothing changed: the gets of the listed ids compare them with the unchanged model.
        return op.points.map((p) => p.id);
      }
      if (!('updated' in outcome)) fail('update-vectors.error', `${where}: updateVectors threw ${String(outcome.code)}`);
      // The points whose payload, as the model holds it now, matches the condition (all without one).
      const condition = op.condition;
      const admitted = op.points.filter((p) => {
        const old = model.points.get(idKey(p.id)) ?? fail('model', `${where}: ${showId(p.id)} is not in the model`);
        return condition === undefined || refFilter(condition, old.payload);
      });
      const written = new Set(admitted.map((p) => idKey(p.id)));
      if (condition !== undefined) count(live.stats, `conditional vector update, ${written.size < distinct.size ? 'some' : 'none'} passed over`);
      if (outcome.updated !== written.size)
        fail('update-vectors.count', `${where}: updated ${outcome.updated}, ${written.size} of ${distinct.size} distinct ids admitted`);
      if (admitted.length === 0) return op.points.map((p) => p.id);
      const version = c.getPoint((admitted[0] as { id: RawId }).id).version;
      if (!(version > model.lastVersion)) fail('update-vectors.version', `${where}: version ${version} not above the previous ${model.lastVersion}`);
      model.lastVersion = version;
      for (const p of admitted) {
        const key = idKey(p.id);
        const old = model.points.get(key) as ModelPoint;
        model.points.set(key, { key, input: [...p.vector], payload: old.payload, version, stored: undefined });
      }
      return op.points.map((p) => p.id);
    }
    case 'search':
      await runSearch(live, model, config, op.search, where);
      return [];
    case 'restart': {
      await live.db.close();
      try {
        live.db = Database.open(live.path, { threads: config.threads });
        live.c = live.db.collection(COLLECTION);
      } catch (error) {
        fail('restart.open', `${where}: reopening threw ${String(error)}`);
      }
      // Everything is read again after a restart.
      return config.pool.map((p) => p.raws[0] as RawId);
    }
  }
}

async function runSearch(live: Live, model: Model, config: SeqConfig, spec: SearchSpec, where: string): Promise<void> {
  observeStored(live, model, `${where}: reading new vectors`);
  let outcome: ReturnType<Collection['searchExplained']>;
  try {
    const filteredBefore = live.c.threadWorkCounts().filtered;
    // spread: through a thread even though nothing else runs (a lone search would run here).
    outcome = config.threads > 0 ? await live.c.searchParallel(toRequest(spec), { spread: true }) : live.c.searchExplained(toRequest(spec));
    // A filter no index answers checked on a thread, over the shared payload records.
    if (live.c.threadWorkCounts().filtered > filteredBefore) count(live.stats, 'filter run on a thread');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    fail('search.threw', `${where}: search ${showSearch(spec)} threw ${String(code ?? '')} ${String(error)}`);
  }
  const view = {
    query: spec.query,
    filter: spec.filter === undefined || Object.keys(spec.filter).length === 0 ? undefined : spec.filter,
    limit: spec.limit,
    offset: spec.offset,
    threshold: spec.threshold,
    withPayload: spec.withPayload,
    withVector: spec.withVector,
    demand: demandOf(config, spec, outcome.explain.exact, model.points.size),
  };
  count(live.stats, `search ${view.demand} ${outcome.explain.strategy}${outcome.explain.fallback ? ' fallback' : ''}`);
  checkSearch(model, view, outcome, `${where}: search ${showSearch(spec)}`);
}

/** After every step: count, gets of a sample (and of every id the step touched), integrity, searches. */
async function checkState(live: Live, model: Model, config: SeqConfig, step: Step, touched: readonly RawId[], where: string): Promise<void> {
  const c = live.c;
  if (c.pointsCount !== model.points.size) fail('count', `${where}: pointsCount ${c.pointsCount}, the model has ${model.points.size}`);
  const rng = new SeededRng(step.sampleSeed);
  const sample: RawId[] = [...touched];
  for (let i = 0; i < 6; i++) sample.push(spell(rng, rng.pick(config.pool)));
  sample.push(`never-${rng.int(100)}`);
  checkGets(c, model, sample, `${where}: get`);
  const problems = c.checkIntegrity();
  if (problems.length > 0) fail('integrity', `${where}: checkIntegrity: ${problems.slice(0, 5).join('; ')}`);
  for (const spec of step.checks) await runSearch(live, model, config, spec, `${where}: check`);
}

export interface RunResult {
  readonly steps: Step[];
  readonly stats: ReadonlyMap<string, number>;
  readonly failure?: { readonly step: number; readonly error: ModelFailure };
}

/**
 * Runs one sequence in a fresh database under `dir`: generated from the seed, or `replay`ed.
 * Stops at the first difference. Errors that are not model failures (a harness bug) propagate.
 */
export async function runSequence(config: SeqConfig, dir: string, replay?: readonly Step[]): Promise<RunResult> {
  const rng = new SeededRng(config.seed ^ 0x5bd1e995);
  const model = new Model({ metric: config.metric, sq8: config.sq8, hnsw: config.hnsw, exact: config.exact });
  const steps: Step[] = [];
  const live = await createCollection(config, join(dir, 'kith.db'));
  // A restart replaces live.db; close whichever is open at the end.
  try {
    const total = replay?.length ?? config.steps;
    for (let i = 0; i < total; i++) {
      let step = replay?.[i] ?? drawStep(rng, config, model, i);
      const where = `step ${i} (${step.op.kind})`;
      count(live.stats, step.op.kind);
      try {
        const touched = await applyOp(live, model, config, step.op, where);
        // Checks are drawn for the state they check, so their thresholds and limits bite.
        if (replay === undefined) step = { ...step, checks: drawChecks(rng, config, model) };
        steps.push(step);
        await checkState(live, model, config, step, touched, where);
        live.stats.set('most points', Math.max(live.stats.get('most points') ?? 0, model.points.size));
      } catch (error) {
        if (steps.length === i) steps.push(step);
        if (error instanceof ModelFailure) return { steps, stats: live.stats, failure: { step: i, error } };
        throw error;
      }
    }
    return { steps, stats: live.stats };
  } finally {
    await live.db.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Reports and minimising.

const showVector = (v: readonly number[]): string =>
  `[${(v.length > 8 ? [...v.slice(0, 8), '…'] : v).map((x) => (Object.is(x, -0) ? '-0' : String(x))).join(',')}]`;
const cut = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n)}…`);

function showSearch(s: SearchSpec): string {
  const parts = [`q=${showVector(s.query)}`, `limit ${s.limit}`];
  if (s.offset > 0) parts.push(`offset ${s.offset}`);
  if (s.filter !== undefined) parts.push(`filter ${cut(JSON.stringify(s.filter), 160)}`);
  if (s.threshold !== undefined) parts.push(`score_threshold ${s.threshold}`);
  if (s.ef !== undefined) parts.push(`ef ${s.ef}`);
  if (s.exact !== undefined) parts.push('exact');
  if (s.strategy !== undefined) parts.push(`strategy ${s.strategy}${s.walk !== undefined ? `/${s.walk}` : ''}`);
  return `{${parts.join(', ')}}`;
}

export function showOp(op: Op): string {
  switch (op.kind) {
    case 'upsert': {
      const conditional = `${op.mode === undefined ? '' : ` (${op.mode})`}${op.condition === undefined ? '' : ` if ${cut(JSON.stringify(op.condition), 120)}`}`;
      return `upsert${conditional} ${op.points.map((p) => `${showId(p.id)} ${p.how} ${showVector(p.vector)} ${cut(JSON.stringify(p.payload), 80)}`).join(' | ')}`;
    }
    case 'upsert-bad':
      return `upsert of ${op.points.length} with ${op.bad} (refused)`;
    case 'delete-ids':
      return `delete ids ${op.ids.map(showId).join(', ')}`;
    case 'delete-filter':
      return `delete filter ${cut(JSON.stringify(op.filter), 200)}`;
    case 'update-vectors':
      return `update vectors${op.condition === undefined ? '' : ` if ${cut(JSON.stringify(op.condition), 120)}`} ${op.points.map((p) => `${showId(p.id)} ${showVector(p.vector)}`).join(' | ')}${op.missing ? ' (one missing: refused)' : ''}`;
    case 'search':
      return `search ${showSearch(op.search)}`;
    case 'restart':
      return 'restart';
  }
}

/** The operation log, one line per step, with the failing step's checks. */
export function showLog(steps: readonly Step[], failedAt?: number): string {
  return steps
    .map((s, i) => {
      const line = `  #${i} ${showOp(s.op)}`;
      if (i !== failedAt) return line;
      return `${line}\n${s.checks.map((c) => `      check ${showSearch(c)}`).join('\n')}`;
    })
    .join('\n');
}

/** Writes the full log as JSON (−0 written as "-0", bigints as "…n"); returns the path. */
export function writeLog(config: SeqConfig, steps: readonly Step[], name: string): string {
  const path = join(tmpdir(), `kith-model-${name}.json`);
  const replacer = (key: string, value: unknown): unknown => (Object.is(value, -0) ? '-0' : value instanceof Set ? [...value] : bigintJson(key, value));
  writeFileSync(path, JSON.stringify({ config, steps }, replacer, 1));
  return path;
}

async function failsTheSame(config: SeqConfig, steps: readonly Step[], kind: string): Promise<RunResult | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'kith-model-min-'));
  try {
    const result = await runSequence(config, dir, steps);
    return result.failure?.error.kind === kind ? result : undefined;
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Delta debugging on the log: drop chunks of steps (halving the chunk size), then points of
 * upsert batches, keeping a removal only if the replay still fails with the same kind.
 * `budget` bounds the replays.
 */
export async function minimize(config: SeqConfig, failing: RunResult, budget = 300): Promise<RunResult> {
  const kind = (failing.failure as NonNullable<RunResult['failure']>).error.kind;
  let best = failing;
  let steps = failing.steps.slice(0, (failing.failure?.step ?? failing.steps.length - 1) + 1);
  let replays = 0;
  for (let chunk = Math.max(1, Math.floor(steps.length / 2)); chunk >= 1 && replays < budget; chunk = Math.floor(chunk / 2)) {
    for (let at = steps.length - 1; at >= 0 && replays < budget; at -= chunk) {
      const from = Math.max(0, at - chunk + 1);
      const candidate = [...steps.slice(0, from), ...steps.slice(at + 1)];
      if (candidate.length === 0) continue;
      replays++;
      const result = await failsTheSame(config, candidate, kind);
      if (result !== undefined) {
        best = result;
        steps = result.steps;
        at = Math.min(at, steps.length);
      }
    }
  }
  for (let i = 0; i < steps.length && replays < budget; i++) {
    const op = steps[i]?.op;
    if (op?.kind !== 'upsert') continue;
    for (let j = op.points.length - 1; j >= 0 && op.points.length > 1 && replays < budget; j--) {
      const current = steps[i]?.op as { kind: 'upsert'; points: UpsertPoint[] };
      if (j >= current.points.length) continue;
      const points = current.points.filter((_, k) => k !== j);
      const candidate = steps.map((s, k) => (k === i ? { ...s, op: { kind: 'upsert' as const, points } } : s));
      replays++;
      const result = await failsTheSame(config, candidate, kind);
      if (result !== undefined) {
        best = result;
        steps = result.steps;
      }
    }
  }
  return best;
}
