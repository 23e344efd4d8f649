/**
 * JSON Lines: one `{"id", "version", "vector", "sparse_vectors", "payload"}` object a line (all but
 * id and vector optional; `vector` also in Qdrant's form, an object of the point's vectors by
 * name; blank lines skipped; a UTF-8 byte order mark skipped, as CSV does). A version (what
 * `kith export` writes) is a decimal string. Every line is checked here, against the collection's
 * dimension and as the server checks a payload, so that an error names the line:
 * `points.jsonl:17: vector: expected 4 numbers, got 3`.
 */
import { isKithError } from '../../core/errors.js';
import { childPath } from '../../core/field-path.js';
import { checkJsonValue, isPlainObject } from '../../payload/json-value.js';
import { checkSparseVector } from '../../search/sparse-search.js';
import type { CollectionSummary, PointLine, SparseVectorJson } from '../target.js';
import { InputFileError, type SourcePoint } from './source.js';
import { readTextLines } from './text-lines.js';
import { parseJson } from '../../core/json-text.js';

const KEYS = new Set(['id', 'version', 'vector', 'sparse_vectors', 'named_vectors', 'payload']);

/** Versions are u64 (nanoseconds); 0 is never handed out. */
const MAX_VERSION = (1n << 64n) - 1n;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : String(value);
}

/**
 * The collection's vector names, from its info: a line's `sparse_vectors` may name only `sparse`;
 * in Qdrant's form of a line's vector, `{"<dense>": [...], "<sparse>": {indices, values},
 * "<named>": [...]}`, the dense vector is `dense` (the collection's `vector_name`, "" when
 * unnamed) and `named` are its other dense vectors.
 */
export interface VectorNames {
  readonly dense: string;
  readonly sparse: ReadonlySet<string>;
  readonly named: ReadonlySet<string>;
}

const UNNAMED: VectorNames = { dense: '', sparse: new Set(), named: new Set() };

export function vectorNamesOf(info: Pick<CollectionSummary, 'vector_name' | 'sparse_vectors' | 'named_vectors'>): VectorNames {
  return {
    dense: info.vector_name ?? '',
    sparse: new Set(Object.keys(info.sparse_vectors ?? {})),
    named: new Set(Object.keys(info.named_vectors ?? {})),
  };
}

function quotedNames(names: Iterable<string>): string {
  const list = [...names].map((n) => JSON.stringify(n)).join(', ');
  return list === '' ? '' : ` (it has ${list})`;
}

/**
 * A line's dense vector, its sparse vectors by name (with the field each came from) and its other
 * dense vectors by name from Qdrant's form of `vector` (`named_vectors` is added by the caller).
 */
type Vectors = { dense: unknown; densePath: string; sparse: Map<string, { raw: unknown; path: string }>; named: Map<string, unknown> };

function splitVectors(vector: unknown, sparseVectors: unknown, names: VectorNames): Vectors | string {
  const sparse = new Map<string, { raw: unknown; path: string }>();
  if (sparseVectors !== undefined && sparseVectors !== null) {
    if (!isPlainObject(sparseVectors)) return `sparse_vectors: expected an object of sparse vectors by name, got ${describe(sparseVectors)}`;
    for (const [name, raw] of Object.entries(sparseVectors)) {
      const path = childPath('sparse_vectors', name);
      if (!names.sparse.has(name)) return `${path}: the collection has no sparse vector named ${JSON.stringify(name)}${quotedNames(names.sparse)}`;
      sparse.set(name, { raw, path });
    }
  }
  const named = new Map<string, unknown>();
  if (!isPlainObject(vector)) return { dense: vector, densePath: 'vector', sparse, named };
  // Qdrant's form: every vector of the point by name.
  const densePath = childPath('vector', names.dense);
  let dense: unknown;
  for (const [name, raw] of Object.entries(vector)) {
    const path = childPath('vector', name);
    if (name === names.dense) dense = raw;
    else if (names.named.has(name)) named.set(name, raw);
    else if (!names.sparse.has(name))
      return `${path}: the collection has no vector named ${JSON.stringify(name)}${quotedNames([names.dense, ...names.sparse, ...names.named])}`;
    else if (sparse.has(name)) return `${path}: also given in sparse_vectors`;
    else sparse.set(name, { raw, path });
  }
  if (dense === undefined) return `${densePath}: required (the dense vector${names.dense === '' ? ', unnamed' : ''})`;
  return { dense, densePath, sparse, named };
}

/** The named dense vectors of a line: its `named_vectors` and those of Qdrant's `vector` form, a name at most once. */
function namedVectorsOf(given: unknown, fromVector: ReadonlyMap<string, unknown>): Record<string, unknown> | undefined | string {
  if (given !== undefined && given !== null && !isPlainObject(given)) return `named_vectors: expected an object of named vectors, got ${describe(given)}`;
  if (fromVector.size === 0) return given === undefined || given === null ? undefined : given;
  // A name such as "__proto__" must be an own key, not the object's prototype.
  const out: Record<string, unknown> = Object.create(null);
  for (const [name, raw] of Object.entries(given ?? {})) out[name] = raw;
  for (const [name, raw] of fromVector) {
    if (Object.hasOwn(out, name)) return `${childPath('vector', name)}: also given in named_vectors`;
    out[name] = raw;
  }
  return { ...out };
}

/** Each sparse vector checked as the engine will (the problem, naming its field), or them all as the REST API takes them. */
function checkSparse(sparse: Vectors['sparse']): Record<string, SparseVectorJson> | undefined | string {
  if (sparse.size === 0) return undefined;
  // A name such as "__proto__" must be an own key, not the object's prototype.
  const out: Record<string, SparseVectorJson> = Object.create(null);
  for (const [name, { raw, path }] of sparse) {
    try {
      checkSparseVector(raw, path);
    } catch (error) {
      if (isKithError(error)) return error.message;
      throw error;
    }
    const { indices, values } = raw as SparseVectorJson;
    out[name] = { indices, values };
  }
  return { ...out };
}

/** The problem with one parsed line, as `field: problem`, or the point. */
export function checkLine(value: unknown, dim: number, names: VectorNames = UNNAMED): PointLine | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `expected an object {"id", "vector", "payload"}, got ${describe(value)}`;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) if (!KEYS.has(key)) return `${key}: unknown field (expected ${[...KEYS].join(', ')})`;
  const { id, version, vector, payload } = record;
  if (id === undefined) return 'id: required';
  if (typeof id === 'number' ? !Number.isSafeInteger(id) || id < 0 : typeof id !== 'string' || id === '') {
    return `id: expected a non-empty string or a non-negative integer, got ${describe(id)}`;
  }
  const versionText = typeof version === 'number' && Number.isSafeInteger(version) ? String(version) : version;
  if (versionText !== undefined && (typeof versionText !== 'string' || !/^[1-9]\d{0,19}$/.test(versionText) || BigInt(versionText) > MAX_VERSION)) {
    return `version: expected a positive integer below 2^64 as a decimal string, got ${describe(version)}`;
  }
  if (vector === undefined) return 'vector: required';
  const vectors = splitVectors(vector, record.sparse_vectors, names);
  if (typeof vectors === 'string') return vectors;
  const { dense, densePath } = vectors;
  if (!Array.isArray(dense)) return `${densePath}: expected ${dim} numbers, got ${describe(dense)}`;
  if (dense.length !== dim) return `${densePath}: expected ${dim} numbers, got ${dense.length}`;
  for (let i = 0; i < dense.length; i++) {
    const x: unknown = dense[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) return `${childPath(densePath, i)}: expected a finite number, got ${describe(x)}`;
  }
  const sparse = checkSparse(vectors.sparse);
  if (typeof sparse === 'string') return sparse;
  // Named dense vectors pass as given: the collection checks their names, sizes and kinds (named_vectors.<name>: …).
  const named = namedVectorsOf(record.named_vectors, vectors.named);
  if (typeof named === 'string') return named;
  if (payload !== undefined && payload !== null && (typeof payload !== 'object' || Array.isArray(payload)))
    return `payload: expected an object, got ${describe(payload)}`;
  try {
    // Nesting, non-finite numbers, keys such as __proto__: refused here with the line, not by the server for the whole batch.
    if (payload !== undefined && payload !== null) checkJsonValue(payload, 'payload');
  } catch (error) {
    if (isKithError(error)) return error.message;
    throw error;
  }
  return {
    id: id as string | number,
    ...(versionText === undefined ? {} : { version: versionText }),
    vector: dense as number[],
    ...(sparse === undefined ? {} : { sparse_vectors: sparse }),
    ...(named === undefined ? {} : { named_vectors: named as Record<string, number[] | number[][]> }),
    ...(payload === undefined || payload === null ? {} : { payload: payload as Record<string, unknown> }),
  };
}

export async function* readJsonl(path: string, label: string, dim: number, names: VectorNames = UNNAMED): AsyncGenerator<SourcePoint> {
  for await (const { text, line, bytesRead } of readTextLines(path, label)) {
    if (text.trim() === '') continue;
    const location = `${label}:${line}`;
    let value: unknown;
    try {
      value = parseJson(text);
    } catch (error) {
      throw new InputFileError(`${location}: not valid JSON (${(error as Error).message})`);
    }
    const checked = checkLine(value, dim, names);
    if (typeof checked === 'string') throw new InputFileError(`${location}: ${checked}`);
    yield { location, point: checked, bytesRead };
  }
}
