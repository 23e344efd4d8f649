/**
 * Request generators for the HTTP fuzz test: a valid request for every endpoint, and mutations
 * that make it hostile (wrong types, missing and extra fields, huge numbers, deep nesting, long
 * strings, control characters, broken JSON and UTF-8, wrong content types, odd methods and paths,
 * duplicated keys, `__proto__`).
 */
import type { SeededRng } from '../../src/core/rng.js';

export interface FuzzRequest {
  method: string;
  url: string;
  /** Sent as is; undefined sends no body. */
  body?: string | Buffer;
  contentType?: string;
}

/** What the generators need to know of the database: collection names and dimensions. */
export interface KnownCollection {
  name: string;
  dim: number;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const pick = <T>(rng: SeededRng, items: readonly T[]): T => items[rng.int(items.length)] as T;
const chance = (rng: SeededRng, p: number): boolean => rng.next() < p;

export const POOL_NAMES = ['fz_new0', 'fz_new1', 'fz_new2'];
const WORDS = ['red', 'green', 'blue', 'é', '日本', '', 'a.b', 'x y'];
const KEYS = ['cat', 'n', 'tags', 'title', 'nested.a', 'nested', 'when', 'flag', 'missing', 'a.b'];

function pointId(rng: SeededRng): Json {
  return chance(rng, 0.5) ? rng.int(40) : `p${rng.int(40)}`;
}

function vector(rng: SeededRng, dim: number): number[] {
  return Array.from({ length: dim }, () => Math.round((rng.next() * 2 - 1) * 100) / 100);
}

function payload(rng: SeededRng): Json {
  return {
    cat: pick(rng, WORDS),
    n: rng.int(100) - 20,
    tags: [pick(rng, WORDS), pick(rng, WORDS)],
    title: `doc ${rng.int(1000)} ${pick(rng, WORDS)}`,
    nested: { a: rng.int(5), b: [1, { c: 'x' }] },
    when: `2024-0${1 + rng.int(9)}-1${rng.int(10)}T00:00:00Z`,
    flag: chance(rng, 0.5),
  };
}

function fieldCondition(rng: SeededRng): Json {
  const key = pick(rng, KEYS);
  switch (rng.int(8)) {
    case 0:
      return { key, match: { value: pick(rng, [pick(rng, WORDS), rng.int(100), true, null, { a: 1 }] as Json[]) } };
    case 1:
      return { key, match: { any: [pick(rng, WORDS), rng.int(50), pick(rng, WORDS)] } };
    case 2:
      return { key, match: { except: [pick(rng, WORDS), rng.int(50)] } };
    case 3:
      return { key, range: { gte: rng.int(50) - 10, lt: rng.int(100) } };
    case 4:
      return { key, range: { gt: '2024-03-01T00:00:00Z', lte: '2024-08-01' } };
    case 5:
      return { key, type: 'prefix', match: { value: pick(rng, ['d', 'doc 1', 'r', '']) } };
    case 6:
      return { key, type: 'contains', match: { value: pick(rng, ['e', 'red', 'doc', 1] as Json[]) } };
    default:
      return { key, type: 'regex', match: { value: pick(rng, ['^doc \\d+', '(?i)RED|blue', 'é$', '[a-c]{1,3}', '.*']) } };
  }
}

export function filter(rng: SeededRng, depth = 0): Json {
  const list = (): Json[] => Array.from({ length: rng.int(3) }, () => (depth < 2 && chance(rng, 0.2) ? filter(rng, depth + 1) : fieldCondition(rng)));
  const out: Record<string, Json> = {};
  if (chance(rng, 0.6)) out.must = list();
  if (chance(rng, 0.3)) out.must_not = list();
  if (chance(rng, 0.3)) out.should = list();
  return out;
}

function collectionName(rng: SeededRng, known: readonly KnownCollection[]): string {
  return chance(rng, 0.8) && known.length > 0 ? pick(rng, known).name : pick(rng, [...POOL_NAMES, 'absent']);
}

function dimOf(name: string, known: readonly KnownCollection[]): number {
  return known.find((c) => c.name === name)?.dim ?? 3;
}

/** A valid request (as JSON, before serialisation) for a random endpoint. */
export function validRequest(rng: SeededRng, known: readonly KnownCollection[]): { method: string; url: string; json?: Json } {
  const name = collectionName(rng, known);
  const dim = dimOf(name, known);
  const base = `/collections/${name}`;
  // Ids or a filter: which points a payload operation changes.
  const selection = (): Record<string, Json> => (chance(rng, 0.5) ? { points: [pointId(rng), pointId(rng)] } : { filter: filter(rng) });
  switch (rng.int(19)) {
    case 0: {
      const json: Record<string, Json> = { name: pick(rng, POOL_NAMES), vector_size: 1 + rng.int(6), distance: pick(rng, ['cosine', 'Euclid', 'l2', 'dot']) };
      if (chance(rng, 0.5)) json.hnsw = chance(rng, 0.5);
      if (chance(rng, 0.3)) json.parameters = { m: 2 + rng.int(10), ef_construction: 4 + rng.int(50), ef_search: 1 + rng.int(50), k: 1 + rng.int(20) };
      if (chance(rng, 0.3)) json.quantization = pick(rng, ['none', 'sq8', { type: 'sq8' }] as Json[]);
      if (chance(rng, 0.3)) json.payload_index = chance(rng, 0.5);
      return { method: 'POST', url: '/collections', json };
    }
    case 1:
      return { method: 'GET', url: '/collections' };
    case 2:
      return { method: 'GET', url: base };
    case 3:
      // Only the pool collections are dropped, so the base collections keep their points.
      return { method: 'DELETE', url: `/collections/${pick(rng, POOL_NAMES)}` };
    case 4:
    case 5: {
      const points = Array.from({ length: 1 + rng.int(4) }, () => {
        const p: Record<string, Json> = { id: pointId(rng), vector: vector(rng, dim) };
        if (chance(rng, 0.8)) p.payload = payload(rng);
        return p;
      });
      return { method: 'PUT', url: `${base}/points`, json: { points } };
    }
    case 6:
      return { method: 'GET', url: `${base}/points/${encodeURIComponent(String(pointId(rng)))}` };
    case 7:
      return { method: 'POST', url: `${base}/points/delete`, json: { points: [pointId(rng), pointId(rng)] } };
    case 8:
      return { method: 'POST', url: `${base}/points/delete`, json: { filter: filter(rng) } };
    case 9: {
      const json: Record<string, Json> = { limit: 1 + rng.int(20) };
      if (chance(rng, 0.4)) json.cursor = pointId(rng);
      if (chance(rng, 0.5)) json.filter = filter(rng);
      if (chance(rng, 0.3)) json.with_payload = pick(rng, [true, false, ['cat', 'nested.a'], { exclude: ['n'] }] as Json[]);
      if (chance(rng, 0.3)) json.with_vector = chance(rng, 0.5);
      return { method: 'POST', url: `${base}/points/scroll`, json };
    }
    case 10:
      return { method: 'POST', url: `${base}/points/count`, json: chance(rng, 0.7) ? { filter: filter(rng) } : {} };
    case 11:
      return { method: 'POST', url: `${base}/points/retrieve`, json: { ids: [pointId(rng), pointId(rng), pointId(rng)], with_vector: chance(rng, 0.5) } };
    case 12:
      return {
        method: 'POST',
        url: `${base}/points/payload`,
        json: { payload: payload(rng), ...(chance(rng, 0.3) ? { key: pick(rng, ['nested', 'nested.b[]', 'x.y']) } : {}), ...selection() },
      };
    case 13:
      return { method: 'PUT', url: `${base}/points/payload`, json: { payload: payload(rng), ...selection() } };
    case 14:
      return {
        method: 'POST',
        url: `${base}/points/payload/delete`,
        json: { keys: pick(rng, [['n'], ['nested.a', 'cat'], ['nested.b[].c']] as Json[]), ...selection() },
      };
    case 15:
      return { method: 'POST', url: `${base}/points/payload/clear`, json: selection() };
    default: {
      const json: Record<string, Json> = { vector: vector(rng, dim) };
      if (chance(rng, 0.5)) json.limit = 1 + rng.int(20);
      if (chance(rng, 0.3)) json.offset = rng.int(10);
      if (chance(rng, 0.6)) json.filter = filter(rng);
      if (chance(rng, 0.2)) json.score_threshold = rng.next() - 0.5;
      if (chance(rng, 0.3)) json.with_payload = pick(rng, [true, false, ['cat', 'n'], []] as Json[]);
      if (chance(rng, 0.3)) json.with_vector = chance(rng, 0.5);
      if (chance(rng, 0.4)) json.params = { ef: 1 + rng.int(100), exact: chance(rng, 0.5), explain: chance(rng, 0.5) };
      return { method: 'POST', url: `${base}/points/search`, json };
    }
  }
}

const HOSTILE_VALUES: readonly Json[] = [
  null,
  true,
  0,
  -1,
  1e308,
  -1e308,
  2 ** 53 + 2,
  1.5,
  '',
  'NaN',
  'Infinity',
  '-0',
  '1e999',
  '\u0000\u0001\u001f\u007f',
  '\ud800',
  '__proto__',
  [],
  {},
  [[[[[]]]]],
  { __proto__x: 1 },
];

function hostileValue(rng: SeededRng): Json {
  switch (rng.int(6)) {
    case 0:
      return 'x'.repeat(1 + rng.int(200000));
    case 1:
      return Array.from({ length: rng.int(3000) }, () => rng.int(10));
    case 2: {
      let v: Json = 1;
      for (let i = rng.int(200); i > 0; i--) v = chance(rng, 0.5) ? [v] : { a: v };
      return v;
    }
    default:
      return pick(rng, HOSTILE_VALUES);
  }
}

/** Every (parent, key) slot of a JSON tree, to mutate one of them in place. */
function slots(root: Json): Array<{ parent: Json[] | Record<string, Json>; key: string | number }> {
  const out: Array<{ parent: Json[] | Record<string, Json>; key: string | number }> = [];
  const walk = (node: Json): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => {
        out.push({ parent: node, key: i });
        walk(child);
      });
    } else if (typeof node === 'object' && node !== null) {
      for (const [k, child] of Object.entries(node)) {
        out.push({ parent: node, key: k });
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

function mutateJson(rng: SeededRng, json: Json): Json {
  const copy = JSON.parse(JSON.stringify(json)) as Json;
  const all = slots(copy);
  if (all.length === 0 || chance(rng, 0.1)) return hostileValue(rng);
  const slot = pick(rng, all);
  const op = rng.int(4);
  if (op === 0 && !Array.isArray(slot.parent)) delete slot.parent[slot.key as string];
  else if (op === 1 && !Array.isArray(slot.parent)) slot.parent[`extra${rng.int(3)}`] = hostileValue(rng);
  else if (Array.isArray(slot.parent)) slot.parent[slot.key as number] = hostileValue(rng);
  else slot.parent[slot.key as string] = hostileValue(rng);
  return copy;
}

/** Text-level damage that JSON values cannot express. */
function mutateText(rng: SeededRng, text: string): string | Buffer {
  switch (rng.int(9)) {
    case 0:
      return text.slice(0, rng.int(text.length + 1));
    case 1: {
      const at = rng.int(text.length + 1);
      return text.slice(0, at) + pick(rng, ['"', '{', ']', ',', '\\', '\u0000', 'NaN', '\n']) + text.slice(at);
    }
    case 2:
      // Duplicated keys: the last one wins in JSON.parse.
      return text.replace(/^\{/, '{"points":1,"vector":"x","name":7,');
    case 3:
      return text.replace(
        /^\{/,
        pick(rng, ['{"__proto__":{"polluted":1},', '{"constructor":{"prototype":{"polluted":1}},', '{"\\u005f_proto__":{"polluted":1},']),
      );
    case 4: {
      const depth = 1000 + rng.int(100000);
      return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    }
    case 5:
      return Buffer.concat([Buffer.from(text.slice(0, rng.int(text.length + 1))), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from('"}')]);
    case 6:
      return pick(rng, ['', ' ', 'null', '[]', '"x"', '1', 'true', '{}', '{"a":1}{"b":2}']);
    case 7:
      return text.replace(/\d+(\.\d+)?/, pick(rng, ['1e400', '-1e400', '00', '9007199254740993', '1.0e-400', '-0']));
    default:
      return text.replace(/"[^"]*"/, `"${'\u0007\u001b'.repeat(rng.int(50))}${'y'.repeat(rng.int(5000))}"`);
  }
}

function mutateUrl(rng: SeededRng, url: string): string {
  switch (rng.int(10)) {
    case 0:
      return `${url}/`;
    case 1:
      return url.replace('/collections', '//collections');
    case 2:
      return `${url}/${'s'.repeat(4000 + rng.int(2000))}`;
    case 3:
      return url.replace(/\/[^/]*$/, `/${'n'.repeat(4090 + rng.int(20))}`);
    case 4:
      return `${url}%zz`;
    case 5:
      return `${url}?limit=abc&__proto__[x]=1`;
    case 6:
      return url.replace(/\/[^/]*$/, pick(rng, ['/..', '/.', '/%2e%2e', '/%00', '/%F0%9F%98%80', '/%C3', '/a%2Fb', '/']));
    case 7:
      return `/${'x/'.repeat(rng.int(300))}`;
    case 8:
      return url.toUpperCase();
    default:
      return `${url}/extra`;
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=latin1',
  'application/jsonx',
  '',
];

/** A request: valid (about 1 in 5), or a valid one with one or two mutations. */
export function fuzzRequest(rng: SeededRng, known: readonly KnownCollection[]): FuzzRequest {
  const valid = validRequest(rng, known);
  const request: FuzzRequest = { method: valid.method, url: valid.url, contentType: 'application/json' };
  let json = valid.json;
  const mutate = !chance(rng, 0.2);
  if (mutate && json !== undefined && chance(rng, 0.5)) json = mutateJson(rng, json);
  request.body = json === undefined ? undefined : JSON.stringify(json);
  if (mutate) {
    const roll = rng.int(10);
    if (roll < 3 && request.body !== undefined) request.body = mutateText(rng, request.body as string);
    else if (roll === 3) request.url = mutateUrl(rng, request.url);
    else if (roll === 4) request.method = pick(rng, METHODS);
    else if (roll === 5) request.contentType = pick(rng, CONTENT_TYPES);
    else if (roll === 6 && request.body === undefined) request.body = JSON.stringify(hostileValue(rng));
  }
  return request;
}
