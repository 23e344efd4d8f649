/**
 * Named dense vectors as requests give them: one vector of the name's size, or a multi-vector's
 * rows (1 to 1,024 of them), each checked as the main vector is (search/vector-input.ts) and
 * normalised under Cosine, so that stored and query rows are scored as the kernels score the main
 * vector.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { normalizeInPlace } from '../core/vector-math.js';
import { LIMITS } from '../segment/collection-config.js';
import type { NamedVector, NamedVectorConfig } from '../segment/named-vectors.js';
import { parseVector } from './vector-input.js';

/** A named vector of `spec`'s kind, as stored and searched. A multi-vector also takes one flat row. */
export function parseNamedVector(raw: unknown, spec: NamedVectorConfig, path: string): NamedVector {
  if (!Array.isArray(raw))
    throw badInput(path, `expected ${spec.multivector ? 'a list of vectors' : `a vector of ${spec.size} numbers`}, got ${describeJson(raw)}`);
  const rows: unknown[] = spec.multivector && (raw.length === 0 || Array.isArray(raw[0])) ? raw : [raw];
  if (!spec.multivector && Array.isArray(raw[0])) throw badInput(path, `expected a vector of ${spec.size} numbers; this vector is not a multi-vector`);
  const { min, max } = LIMITS.multivectorRows;
  if (rows.length < min || rows.length > max) throw badInput(path, `a multi-vector holds ${min} to ${max} vectors, got ${rows.length}`);
  const data = new Float32Array(rows.length * spec.size);
  rows.forEach((row, r) => {
    const values = parseVector(row, spec.size, rows === raw ? childPath(path, r) : path);
    if (spec.distance === 'Cosine') normalizeInPlace(values);
    data.set(values, r * spec.size);
  });
  return { rows: rows.length, data };
}
