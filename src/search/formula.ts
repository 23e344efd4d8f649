/**
 * Score formulas (Qdrant's `{formula}` query, 1.18): an expression over a point's prefetch scores,
 * payload values, filter conditions (1 or 0), geo distances, date-times and decay functions,
 * evaluated for every candidate of the prefetches to give its new score (larger is better).
 * Qdrant's rules, in our own code:
 *
 * - `$score` is the first prefetch's score (`$score[i]` the i-th's); a point a prefetch did not
 *   find takes the default given for it, else 0.
 * - A payload variable is the number at that key (an array of one number counts as it); absent,
 *   the default given for the key; no number there and no default: the query fails (400).
 * - Arithmetic in float64: a product stops at a 0 factor, a quotient with a 0 numerator is 0, a
 *   division by 0 takes `by_zero_default` when given; any non-finite result fails the query.
 * - Decays (x − target, target 0 by default): exp λ|d|, gauss λd², linear max(0, 1 − λ|d|), with
 *   λ from `midpoint` (0.5) and `scale` (1): ln(midpoint)/scale, ln(midpoint)/scale², (1 −
 *   midpoint)/scale.
 * - Geo distance in meters (haversine); date-times as seconds since the epoch.
 */
import { badInput } from '../core/errors.js';
import type { PointId } from '../core/point-id.js';
import { parseDatetime } from '../payload/datetime.js';
import { haversineMeters } from '../payload/filter-compile.js';
import type { KeyPath } from '../payload/filter-types.js';
import { valuesAt } from '../payload/json-value.js';

export type FormulaExpr =
  | { readonly op: 'const'; readonly value: number }
  | { readonly op: 'score'; readonly index: number }
  | { readonly op: 'payload'; readonly path: KeyPath }
  | { readonly op: 'condition'; readonly test: (payload: Record<string, unknown>, id: PointId) => boolean }
  | { readonly op: 'geo'; readonly lat: number; readonly lon: number; readonly path: KeyPath }
  | { readonly op: 'datetime'; readonly seconds: number }
  | { readonly op: 'datetime_key'; readonly path: KeyPath }
  | { readonly op: 'mult' | 'sum'; readonly args: readonly FormulaExpr[] }
  | { readonly op: 'neg' | 'abs' | 'sqrt' | 'exp' | 'log10' | 'ln'; readonly arg: FormulaExpr }
  | { readonly op: 'div'; readonly left: FormulaExpr; readonly right: FormulaExpr; readonly byZero?: number }
  | { readonly op: 'pow'; readonly base: FormulaExpr; readonly exponent: FormulaExpr }
  | { readonly op: 'decay'; readonly kind: 'lin' | 'exp' | 'gauss'; readonly x: FormulaExpr; readonly target?: FormulaExpr; readonly lambda: number };

export interface Formula {
  readonly expr: FormulaExpr;
  /** Defaults by variable as written (`price`, `$score[1]`). */
  readonly defaults: ReadonlyMap<string, unknown>;
  /** Nodes of the expression: its cost per candidate. */
  readonly nodes: number;
  /** Where the formula sits in the request, for errors. */
  readonly path: string;
}

/** One candidate as the formula reads it. */
export interface FormulaPoint {
  readonly id: PointId;
  readonly payload: Record<string, unknown>;
  /** Its score in the i-th prefetch, undefined when that prefetch did not find it. */
  score(index: number): number | undefined;
}

/** The decay constant λ from Qdrant's midpoint and scale, checked as Qdrant checks them. */
export function decayLambda(kind: 'lin' | 'exp' | 'gauss', midpoint: number, scale: number, path: string): number {
  if (kind === 'lin' ? midpoint < 0 || midpoint > 1 : midpoint <= 0 || midpoint >= 1) {
    throw badInput(`${path}.midpoint`, `a ${kind} decay's midpoint must be in ${kind === 'lin' ? '[0, 1]' : '(0, 1)'}, got ${midpoint}`);
  }
  if (!(scale > 0)) throw badInput(`${path}.scale`, `must be positive, got ${scale}`);
  if (kind === 'lin') return (1 - midpoint) / scale;
  return kind === 'exp' ? Math.log(midpoint) / scale : Math.log(midpoint) / (scale * scale);
}

/** The candidate's score by the formula; a 400 naming the formula when it cannot be computed. */
export function evaluateFormula(formula: Formula, point: FormulaPoint): number {
  const fail = (problem: string): never => {
    throw badInput(formula.path, `point ${JSON.stringify(point.id)}: ${problem}`);
  };
  const finite = (value: number, what: string): number => (Number.isFinite(value) ? value : fail(`${what} is not a finite number`));
  const valueAt = (path: KeyPath, name: string): unknown => {
    const values = valuesAt(point.payload, path.key, path.parts);
    const flat = values.length === 1 && Array.isArray(values[0]) ? (values[0] as unknown[]) : values;
    if (flat.length === 1) return flat[0];
    if (flat.length > 1) return flat;
    return formula.defaults.has(name) ? formula.defaults.get(name) : fail(`no value at \`${name}\` in its payload nor in the defaults`);
  };
  const numberAt = (path: KeyPath): number => {
    const value = valueAt(path, path.key);
    return typeof value === 'number' ? value : fail(`\`${path.key}\` is not a number`);
  };
  const evaluate = (e: FormulaExpr): number => {
    switch (e.op) {
      case 'const':
        return e.value;
      case 'score': {
        const score = point.score(e.index);
        if (score !== undefined) return score;
        const fallback = formula.defaults.get(e.index === 0 ? '$score' : `$score[${e.index}]`) ?? formula.defaults.get(`$score[${e.index}]`);
        return typeof fallback === 'number' ? fallback : 0;
      }
      case 'payload':
        return numberAt(e.path);
      case 'condition':
        return e.test(point.payload, point.id) ? 1 : 0;
      case 'geo': {
        const value = valueAt(e.path, e.path.key) as { lat?: unknown; lon?: unknown } | null;
        if (typeof value !== 'object' || value === null || typeof value.lat !== 'number' || typeof value.lon !== 'number')
          return fail(`\`${e.path.key}\` is not a geo point {lat, lon}`);
        return haversineMeters(e.lon, e.lat, value.lon, value.lat);
      }
      case 'datetime':
        return e.seconds;
      case 'datetime_key': {
        const value = valueAt(e.path, e.path.key);
        const instant = typeof value === 'string' ? parseDatetime(value) : undefined;
        return instant === undefined ? fail(`\`${e.path.key}\` is not an RFC 3339 date-time`) : instant.ms / 1000 + instant.subMsNanos / 1e9;
      }
      case 'mult': {
        let product = 1;
        for (const arg of e.args) {
          const value = evaluate(arg);
          if (value === 0) return 0;
          product *= value;
        }
        return product;
      }
      case 'sum': {
        let sum = 0;
        for (const arg of e.args) sum += evaluate(arg);
        return sum;
      }
      case 'neg':
        return -evaluate(e.arg);
      case 'abs':
        return Math.abs(evaluate(e.arg));
      case 'sqrt': {
        const v = evaluate(e.arg);
        return finite(Math.sqrt(v), `√${v}`);
      }
      case 'exp': {
        const v = evaluate(e.arg);
        return finite(Math.exp(v), `exp(${v})`);
      }
      case 'log10': {
        const v = evaluate(e.arg);
        return finite(Math.log10(v), `log10(${v})`);
      }
      case 'ln': {
        const v = evaluate(e.arg);
        return finite(Math.log(v), `ln(${v})`);
      }
      case 'div': {
        const left = evaluate(e.left);
        if (left === 0) return 0;
        const right = evaluate(e.right);
        if (right === 0 && e.byZero !== undefined) return e.byZero;
        return finite(left / right, `${left}/${right}`);
      }
      case 'pow': {
        const base = evaluate(e.base);
        const exponent = evaluate(e.exponent);
        return finite(base ** exponent, `${base}^${exponent}`);
      }
      case 'decay': {
        const d = evaluate(e.x) - (e.target === undefined ? 0 : evaluate(e.target));
        if (e.kind === 'exp') return Math.exp(e.lambda * Math.abs(d));
        if (e.kind === 'gauss') return Math.exp(e.lambda * d * d);
        return Math.max(0, 1 - e.lambda * Math.abs(d));
      }
    }
  };
  const score = evaluate(formula.expr);
  // Qdrant answers in float32: a score that overflows it fails as theirs does.
  return finite(Math.fround(score) === Number.POSITIVE_INFINITY || Math.fround(score) === Number.NEGATIVE_INFINITY ? Number.NaN : score, `the score ${score}`);
}
