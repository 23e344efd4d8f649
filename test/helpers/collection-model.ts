/**
 * The plain in-memory model of one kith collection, and the comparisons of kith's answers with it.
 * test/helpers/collection-model-run.ts drives both; test/property/collection-model.prop.test.ts
 * says what the whole test promises.
 *
 * The model is a Map of normalised id → { input vector, payload, version, stored vector }.
 *
 * Stored vectors. The model predicts what kith stores: the float32 input, unit-normalised under
 * Cosine, and under sq8 dequantized from its codes (code = round((x − min)/(max − min)·255),
 * x' = min + code·(max − min)/255, min and max float32) and normalised again under Cosine. The
 * first `getPoint` of a point is checked against that prediction (exactly when there is no
 * rounding to predict: float32 Dot/Euclid; within a float32 ulp after normalisation; within one
 * sq8 step under sq8, since a component on a rounding boundary may take either code), and from
 * then on the vector kith returned is the point's stored vector: every later read (searches'
 * `with_vector`, gets after restarts) must give it back bit for bit, until an upsert changes it.
 *
 * Scores. The model scores from the stored vectors and the query prepared as kith documents it
 * (float32; unit-normalised under Cosine), in float64: Dot/Cosine sum q_i·v_i, Euclid
 * sqrt(Σ (q_i − v_i)²). kith computes in float32 (SIMD lanes, sq8 from codes through
 * min·Σq + step·Σ q_i·code_i), so each model score carries a tolerance:
 *   - exact sequences (float32, Dot or Euclid, small-integer vectors and queries): 0. Every
 *     product and partial sum is an integer below 2^24, so kith's float32 arithmetic is exact in
 *     any order, and results must be identical: same ids, same order, same scores, ties by id;
 *   - otherwise 1e-5 · S + 1e-35 on the similarity (the squared distance for Euclid), where S is
 *     the sum of the magnitudes kith adds up: Σ|q_i·v_i| (plus Σ|q_i|·2·max|v| under sq8, for the
 *     min·Σq + step·Σq·code decomposition), and for Euclid also |q|² + |v|² (the expanded form
 *     kith's sq8 kernel uses). float32 rounds each operation by at most 2^-24 ≈ 6e-8 relative;
 *     with at most 16 dimensions that bounds the error near 1e-6 · S, and 1e-5 leaves a 10×
 *     margin. 1e-35 absorbs float32 underflow (products of 1e-30 components become 0).
 * Within that tolerance two scores are a tie whose order the model cannot predict. Each hit's
 * score must be within its tolerance of the model's; kith's own order must be sorted by its
 * scores with ties by id; and the hits must be a window kith's scores could produce (checkComplete).
 */
import assert from 'node:assert/strict';
import type { Collection, ScoredPoint } from '../../src/lib.js';

/** What `searchExplained` returns. */
export type SearchOutcome = ReturnType<Collection['searchExplained']>;

import type { Json, JsonObject } from './filter-reference.js';
import { refFilter } from './filter-reference.js';
import { idKey, type RawId } from './nasty-data.js';

export type Metric = 'cosine' | 'euclid' | 'dot';

/** A check that failed: `kind` names which (failures of one kind are one bug, usually). */
export class ModelFailure extends Error {
  constructor(
    readonly kind: string,
    message: string,
  ) {
    super(`[${kind}] ${message}`);
  }
}

export function fail(kind: string, message: string): never {
  throw new ModelFailure(kind, message);
}

/** Runs node:assert checks, reporting a failure under `kind`. */
export function checking<T>(kind: string, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof ModelFailure) throw error;
    throw new ModelFailure(kind, error instanceof Error ? error.message : String(error));
  }
}

/** Ids as they print: JSON-escaped, long ones cut, with their length. */
export function showId(id: RawId): string {
  if (typeof id === 'number') return String(id);
  const json = JSON.stringify(id);
  return json.length <= 48 ? json : `${json.slice(0, 40)}…" (${id.length} chars, ${Buffer.byteLength(id)} B)`;
}

// ---------------------------------------------------------------------------------------------
// Stored vectors and scores.

const F32_ULP = 2 ** -22;

function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  if (sum === 0) return v;
  const norm = Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
  return v;
}

/** The vector kith should store for an input, and how far a correct one may be from it. */
export function predictStored(input: readonly number[], metric: Metric, sq8: boolean): { values: Float32Array; tolerance: number } {
  const v = Float32Array.from(input);
  if (metric === 'cosine') normalize(v);
  let tolerance = metric === 'cosine' ? F32_ULP : 0;
  if (!sq8) return { values: v, tolerance };
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const x of v) {
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  min = Math.fround(min);
  max = Math.fround(max);
  const step = (max - min) / 255;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const code = max > min ? Math.min(255, Math.max(0, Math.round(((v[i] as number) - min) * (255 / (max - min))))) : 0;
    out[i] = min + code * step;
  }
  if (metric === 'cosine') normalize(out);
  const magnitude = Math.max(Math.abs(min), Math.abs(max));
  tolerance += step * 1.01 + F32_ULP * magnitude;
  return { values: out, tolerance };
}

/** The query as kith searches it: float32, unit-normalised under Cosine. */
export function prepareQuery(query: readonly number[], metric: Metric): Float32Array {
  const q = Float32Array.from(query);
  return metric === 'cosine' ? normalize(q) : q;
}

export interface ModelScore {
  /** The API score: similarity, or L2 distance under Euclid. */
  score: number;
  /** Higher is better: the similarity, or minus the squared distance. */
  good: number;
  /** How far kith's `good` may be from this one (0: exactly this). */
  tolerance: number;
}

export function modelScore(q: Float32Array, v: readonly number[], metric: Metric, sq8: boolean, exact: boolean): ModelScore {
  let dot = 0;
  let magnitudes = 0;
  let d2 = 0;
  let qq = 0;
  let vv = 0;
  let qAbs = 0;
  let vMax = 0;
  for (let i = 0; i < v.length; i++) {
    const a = q[i] as number;
    const b = v[i] as number;
    dot += a * b;
    magnitudes += Math.abs(a * b);
    d2 += (a - b) * (a - b);
    qq += a * a;
    vv += b * b;
    qAbs += Math.abs(a);
    vMax = Math.max(vMax, Math.abs(b));
  }
  let s = magnitudes + (sq8 ? 2 * qAbs * vMax : 0);
  if (metric === 'euclid') s += d2 + qq + vv;
  const tolerance = exact ? 0 : 1e-5 * s + 1e-35;
  if (metric === 'euclid') return { score: Math.sqrt(d2), good: -d2, tolerance };
  return { score: dot, good: dot, tolerance };
}

/** kith's score as "higher is better" in the model's units. */
export const goodOf = (score: number, metric: Metric): number => (metric === 'euclid' ? -(score * score) : score);

/** Whether a score passes `score_threshold` (at least it; at most it for Euclid distances). */
export const passes = (score: number, threshold: number, metric: Metric): boolean => (metric === 'euclid' ? score <= threshold : score >= threshold);

// ---------------------------------------------------------------------------------------------
// The model.

export interface ModelPoint {
  readonly key: string;
  input: number[];
  payload: JsonObject;
  version: bigint;
  /** What kith returned for the vector once; undefined until read after an upsert changed it. */
  stored: number[] | undefined;
}

export interface ModelSpec {
  readonly metric: Metric;
  readonly sq8: boolean;
  readonly hnsw: boolean;
  /** Scores are exact (see the header). */
  readonly exact: boolean;
}

export interface Ranked {
  readonly id: string;
  readonly s: ModelScore;
}

/** Orders by score, best first, ties by id in JS string order (kith's documented order). */
export const byRank = (a: Ranked, b: Ranked): number => (a.s.good !== b.s.good ? b.s.good - a.s.good : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class Model {
  readonly points = new Map<string, ModelPoint>();
  lastVersion = 0n;

  constructor(readonly spec: ModelSpec) {}

  matches(key: string, filter: JsonObject | undefined): boolean {
    const p = this.points.get(key);
    return p !== undefined && (filter === undefined || refFilter(filter, p.payload));
  }

  /** Every live point matching the filter, ranked as kith must rank them. Needs stored vectors. */
  rank(query: readonly number[], filter: JsonObject | undefined): Ranked[] {
    const q = prepareQuery(query, this.spec.metric);
    const out: Ranked[] = [];
    for (const p of this.points.values()) {
      if (filter !== undefined && !refFilter(filter, p.payload)) continue;
      const v = p.stored ?? fail('model', `point ${showId(p.key)} has no observed stored vector`);
      out.push({ id: p.key, s: modelScore(q, v, this.spec.metric, this.spec.sq8, this.spec.exact) });
    }
    return out.sort(byRank);
  }

  /** A score the model predicts from its own stored-vector prediction (to pick thresholds). */
  roughScore(query: readonly number[], key: string): number | undefined {
    const p = this.points.get(key);
    if (p === undefined) return undefined;
    const v = p.stored ?? Array.from(predictStored(p.input, this.spec.metric, this.spec.sq8).values);
    return modelScore(prepareQuery(query, this.spec.metric), v, this.spec.metric, this.spec.sq8, true).score;
  }
}

// ---------------------------------------------------------------------------------------------
// Comparisons.

/** Compares one read point (get or search hit) with the model: id, version, payload, vector. */
export function checkStoredVector(model: Model, p: ModelPoint, vector: readonly number[], where: string): void {
  if (vector.length !== p.input.length) fail('vector', `${where}: ${vector.length} components, expected ${p.input.length}`);
  if (p.stored !== undefined) {
    for (let i = 0; i < vector.length; i++) {
      // Numeric equality: -0 and 0 are one stored value (an upsert of either keeps the other).
      if (vector[i] !== p.stored[i]) {
        fail('vector', `${where}: stored vector of ${showId(p.key)} changed: [${vector.join(', ')}], read before as [${p.stored.join(', ')}]`);
      }
    }
    return;
  }
  const { values, tolerance } = predictStored(p.input, model.spec.metric, model.spec.sq8);
  for (let i = 0; i < vector.length; i++) {
    const diff = Math.abs((vector[i] as number) - (values[i] as number));
    if (!(diff <= tolerance)) {
      fail(
        'vector',
        `${where}: stored vector of ${showId(p.key)} is [${vector.join(', ')}], expected [${Array.from(values).join(', ')}] ± ${tolerance} from input [${p.input.join(', ')}]`,
      );
    }
  }
  p.stored = [...vector];
}

/** The JSON text a payload is stored as (-0 becomes 0; key order is kept). */
export const payloadText = (payload: unknown): string => JSON.stringify(payload);

/** Reads every pool id given and compares with the model; missing ones must be ERR_POINT_NOT_FOUND. */
export function checkGets(c: Collection, model: Model, raws: readonly RawId[], where: string): void {
  for (const raw of raws) {
    const key = idKey(raw);
    const p = model.points.get(key);
    if (p === undefined) {
      let found: unknown;
      try {
        found = c.getPoint(raw);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== 'ERR_POINT_NOT_FOUND') fail('get.error', `${where}: getPoint(${showId(raw)}) threw ${code ?? ''} ${String(error)}`);
        continue;
      }
      fail('get.deleted-found', `${where}: getPoint(${showId(raw)}) found a point the model does not have: ${JSON.stringify(found, bigintJson).slice(0, 300)}`);
    }
    let got: ReturnType<Collection['getPoint']>;
    try {
      got = c.getPoint(raw);
    } catch (error) {
      fail(
        'get.missing',
        `${where}: getPoint(${showId(raw)}) threw ${(error as { code?: string }).code ?? ''} ${String(error)}; the model has it (version ${p.version})`,
      );
    }
    if (got.id !== key) fail('get.id', `${where}: getPoint(${showId(raw)}).id is ${showId(got.id)}`);
    if (got.version !== p.version) fail('get.version', `${where}: ${showId(raw)} version ${got.version}, expected ${p.version}`);
    if (payloadText(got.payload) !== payloadText(p.payload)) {
      fail('get.payload', `${where}: ${showId(raw)} payload ${payloadText(got.payload)}, expected ${payloadText(p.payload)}`);
    }
    checkStoredVector(model, p, got.vector, `${where}: getPoint(${showId(raw)})`);
  }
}

export const bigintJson = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? `${value}n` : value);

/** A search as the model sees it (the parsed request is built by the runner). */
export interface SearchView {
  readonly query: readonly number[];
  readonly filter: JsonObject | undefined;
  readonly limit: number;
  readonly offset: number;
  readonly threshold: number | undefined;
  readonly withPayload: WithPayload;
  readonly withVector: boolean;
  /**
   * What the model may demand: `exact` (the right top-k), or `reachable` (an approximate answer
   * that must still hold min(limit, matches) hits when no threshold cuts it).
   */
  readonly demand: 'exact' | 'reachable';
}

const showHit = (h: ScoredPoint): string => `${showId(h.id)}@${h.score}`;

/** Every hit live, matching, current, well shaped; the list sorted; and as complete as demanded. */
export function checkSearch(model: Model, view: SearchView, outcome: SearchOutcome, where: string): void {
  const metric = model.spec.metric;
  const hits = outcome.points;
  const ranked = model.rank(view.query, view.filter);
  const own = new Map(ranked.map((r) => [r.id, r.s]));
  const at = `${where} (strategy ${outcome.explain.strategy}${outcome.explain.fallback ? ', fallback' : ''}, exact ${outcome.explain.exact})`;
  const seen = new Set<string>();
  hits.forEach((hit, i) => {
    const p = model.points.get(hit.id);
    if (p === undefined) fail('search.dead-hit', `${at}: hit ${i} ${showHit(hit)} is not a live point`);
    if (seen.has(hit.id)) fail('search.duplicate-hit', `${at}: ${showId(hit.id)} returned twice`);
    seen.add(hit.id);
    const s = own.get(hit.id);
    if (s === undefined) fail('search.filter', `${at}: hit ${i} ${showHit(hit)} does not match the filter (payload ${payloadText(p.payload)})`);
    if (hit.version !== p.version) fail('search.version', `${at}: hit ${showHit(hit)} has version ${hit.version}, current is ${p.version}`);
    if (!(Math.abs(goodOf(hit.score, metric) - s.good) <= s.tolerance) && !(model.spec.exact && hit.score === s.score)) {
      fail(
        'search.score',
        `${at}: hit ${showHit(hit)} scored ${hit.score}, the model says ${s.score} (± ${s.tolerance} on ${metric === 'euclid' ? 'the squared distance' : 'the score'})`,
      );
    }
    if (model.spec.exact && hit.score !== s.score) fail('search.score', `${at}: hit ${showHit(hit)} scored ${hit.score}, exactly ${s.score} expected`);
    checkShape(model, p, hit, view, `${at}: hit ${showId(hit.id)}`);
    if (view.threshold !== undefined && !passes(hit.score, view.threshold, metric)) {
      fail('search.threshold', `${at}: hit ${showHit(hit)} fails score_threshold ${view.threshold}`);
    }
    const prev = hits[i - 1];
    if (prev !== undefined) {
      const a = goodOf(prev.score, metric);
      const b = goodOf(hit.score, metric);
      if (a < b || (prev.score === hit.score && !(prev.id < hit.id))) {
        fail('search.order', `${at}: ${showHit(prev)} before ${showHit(hit)} (sorted by score, ties by id ascending)`);
      }
    }
  });

  const full = Math.max(0, Math.min(view.limit, ranked.length - view.offset));
  if (view.threshold === undefined && hits.length !== full) {
    fail(
      view.demand === 'reachable' ? 'search.count' : outcome.explain.exact ? 'search.exact' : 'search.recall',
      `${at}: ${hits.length} hits, expected min(limit ${view.limit}, ${ranked.length} matches - offset ${view.offset}) = ${full}`,
    );
  }
  if (hits.length > full) fail('search.count', `${at}: ${hits.length} hits, more than ${full}`);
  if (view.demand === 'reachable') return;
  checkComplete(model, view, outcome, ranked, `${at}`);
}

/**
 * An answer that must be exact: with exact scores, exactly the model's window (ranking from
 * `offset`, `limit` long, cut at the first score failing the threshold). With tolerances, kith's
 * scores are already known to be within tolerance of the model's; what is left is that the hits
 * are a window kith's scores could produce: every other match can be placed before or after the
 * window, as many are placed before as `offset` says, and the threshold cut where it may be.
 */
function checkComplete(model: Model, view: SearchView, outcome: SearchOutcome, ranked: readonly Ranked[], at: string): void {
  const metric = model.spec.metric;
  const hits = outcome.points;
  const kind = outcome.explain.exact ? 'search.exact' : 'search.recall';
  const show = (list: ReadonlyArray<{ id: string; score: number }>): string => list.map((h) => `${showId(h.id)}@${h.score}`).join(', ');
  const window = ranked.slice(view.offset, view.offset + view.limit);
  const context = (): string => `\n  kith:  ${show(hits)}\n  model: ${show(window.map((r) => ({ id: r.id, score: r.s.score })))}`;
  if (model.spec.exact) {
    const t = view.threshold;
    const cut = t === undefined ? -1 : window.findIndex((r) => !passes(r.s.score, t, metric));
    const expected = cut < 0 ? window : window.slice(0, cut);
    const differs = hits.findIndex((h, i) => h.id !== expected[i]?.id || h.score !== expected[i]?.s.score);
    if (hits.length !== expected.length || differs >= 0) {
      const got = new Set(hits.map((h) => h.id));
      const missing = expected.filter((r) => !got.has(r.id)).map((r) => `${showId(r.id)}@${r.s.score}`);
      const at0 = differs >= 0 ? differs : Math.min(hits.length, expected.length);
      const [k, e] = [hits[at0], expected[at0]];
      fail(
        kind,
        `${at}: not the exact top ${view.limit} (offset ${view.offset}): ${hits.length} hits for ${expected.length}; first difference at ${at0}: kith ${k === undefined ? 'nothing' : showHit(k)}, model ${e === undefined ? 'nothing' : `${showId(e.id)}@${e.s.score}`}; missing: ${missing.slice(0, 10).join(', ') || 'none'}${context()}`,
      );
    }
    return;
  }
  const inHits = new Set(hits.map((h) => h.id));
  if (hits.length > 0) {
    const first = goodOf((hits[0] as ScoredPoint).score, metric);
    const last = goodOf((hits[hits.length - 1] as ScoredPoint).score, metric);
    let mustBefore = 0;
    let mayBefore = 0;
    for (const r of ranked) {
      if (inHits.has(r.id)) continue;
      const canBefore = r.s.good + r.s.tolerance >= first;
      const canAfter = r.s.good - r.s.tolerance <= last;
      if (!canBefore && !canAfter) fail(kind, `${at}: ${showId(r.id)}@${r.s.score} (± ${r.s.tolerance}) belongs among the hits${context()}`);
      if (!canAfter) mustBefore++;
      if (canBefore) mayBefore++;
    }
    if (mustBefore > view.offset || mayBefore < view.offset) {
      fail(kind, `${at}: offset ${view.offset}, but ${mustBefore} to ${mayBefore} matches score above the hits${context()}`);
    }
  }
  const t = view.threshold;
  if (t === undefined) return;
  // P matches pass the threshold by kith's scores, and the hits are ranks offset… up to P: all of
  // the window when P reaches past it, none when P ≤ offset, else exactly P − offset.
  const tGood = goodOf(t, metric);
  const surePass = ranked.filter((r) => r.s.good - r.s.tolerance >= tGood).length;
  const mayPass = ranked.filter((r) => r.s.good + r.s.tolerance >= tGood).length;
  const shown = view.offset + hits.length;
  const full = Math.max(0, Math.min(view.limit, ranked.length - view.offset));
  if (full === 0) return;
  const [low, high] = hits.length === full ? [shown, Number.POSITIVE_INFINITY] : hits.length === 0 ? [0, view.offset] : [shown, shown];
  if (mayPass < low || surePass > high) {
    fail(kind, `${at}: ${hits.length} hits pass score_threshold ${t}, but ${surePass} to ${mayPass} matches do (offset ${view.offset})${context()}`);
  }
}

/** `with_payload` as the model sends it: all, none, a list of paths, or {include} / {exclude}. */
export type WithPayload = boolean | readonly string[] | { readonly include: readonly string[] } | { readonly exclude: readonly string[] };

const DROPPED = Symbol('dropped');

/**
 * What `with_payload` leaves of a payload, written plainly from Qdrant's rules (docs/api.md): a
 * path that is a top-level key names it; else `a.b` walks into objects and `c[]` into every
 * element. include keeps what a path names and the ancestors on its way (an array is kept with
 * the elements the path reaches into); exclude drops what a path names.
 */
export function selectedPayload(payload: JsonObject, w: Exclude<WithPayload, false>): JsonObject {
  if (w === true) return payload;
  const include = Array.isArray(w) || 'include' in w;
  const list: readonly string[] = Array.isArray(w) ? w : 'include' in w ? w.include : (w as { exclude: readonly string[] }).exclude;
  const steps = list.map((p) =>
    Object.hasOwn(payload, p) || p === '' ? [p] : p.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), '[]'] : [part])),
  );
  const keep = (value: Json, rests: string[][]): Json | typeof DROPPED => {
    if (include) {
      if (rests.length === 0) return DROPPED;
      if (rests.some((r) => r.length === 0)) return value;
    } else {
      if (rests.some((r) => r.length === 0)) return DROPPED;
      if (rests.length === 0) return value;
    }
    if (Array.isArray(value)) {
      const next = rests.filter((r) => r[0] === '[]').map((r) => r.slice(1));
      return value.map((e) => keep(e, next)).filter((e): e is Json => e !== DROPPED);
    }
    if (typeof value === 'object' && value !== null) {
      const out: JsonObject = {};
      for (const [k, v] of Object.entries(value)) {
        const kept = keep(
          v,
          rests.filter((r) => r[0] === k).map((r) => r.slice(1)),
        );
        if (kept !== DROPPED) out[k] = kept;
      }
      return out;
    }
    return value;
  };
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(payload)) {
    const kept = keep(
      v,
      steps.filter((r) => r[0] === k).map((r) => r.slice(1)),
    );
    if (kept !== DROPPED) out[k] = kept;
  }
  return out;
}

function checkShape(model: Model, p: ModelPoint, hit: ScoredPoint, view: SearchView, where: string): void {
  const w = view.withPayload;
  if (w === false) {
    if (hit.payload !== undefined) fail('search.shape', `${where}: payload returned with with_payload false`);
  } else {
    const expected = selectedPayload(p.payload, w);
    if (payloadText(hit.payload) !== payloadText(expected)) {
      fail('search.payload', `${where}: payload ${payloadText(hit.payload)}, expected ${payloadText(expected)}`);
    }
  }
  if (view.withVector) {
    if (hit.vector === undefined) fail('search.shape', `${where}: no vector with with_vector true`);
    checkStoredVector(model, p, hit.vector, `${where} with_vector`);
  } else if (hit.vector !== undefined) {
    fail('search.shape', `${where}: vector returned without with_vector`);
  }
}

/** The deleted count kith reports must be the model's. */
export function checkDeleted(got: { deleted: number }, expected: number, where: string): void {
  checking('delete.count', () => assert.equal(got.deleted, expected, `${where}: deleted ${got.deleted}, the model says ${expected}`));
}
