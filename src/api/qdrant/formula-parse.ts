/**
 * Qdrant's `{formula, defaults}` query parsed into the engine's formula (search/formula.ts): numbers,
 * variables (`$score`, `$score[i]`, payload keys), filter conditions (1 when a point matches),
 * `geo_distance`, `datetime`, `datetime_key`, `mult`, `sum`, `neg`, `abs`, `div`, `sqrt`, `pow`,
 * `exp`, `log10`, `ln` and the `lin_decay`, `exp_decay`, `gauss_decay` functions. An expression
 * holds at most FORMULA_NODES nodes, FORMULA_DEPTH deep: its cost per candidate is counted before
 * the query runs.
 */
import { childPath } from '../../core/field-path.js';
import { describeJson } from '../../core/point-id.js';
import { parseDatetime } from '../../payload/datetime.js';
import { compileFilter } from '../../payload/filter-compile.js';
import { parseKeyPath } from '../../payload/filter-parse.js';
import type { Filter } from '../../payload/filter-types.js';
import { decayLambda, type Formula, type FormulaExpr } from '../../search/formula.js';
import { asObject, formatError, optionalNumber, validationError } from './errors.js';
import { parseQdrantFilter } from './filter.js';

/** Nodes of one formula: each is evaluated once per candidate. */
export const FORMULA_NODES = 1024;
const FORMULA_DEPTH = 64;

const UNARY = ['neg', 'abs', 'sqrt', 'exp', 'log10', 'ln'] as const;
const DECAYS = { lin_decay: 'lin', exp_decay: 'exp', gauss_decay: 'gauss' } as const;
const OPERATORS = new Set<string>(['mult', 'sum', 'div', 'pow', 'geo_distance', 'datetime', 'datetime_key', ...UNARY, ...Object.keys(DECAYS)]);

/** `{formula, defaults}` at `path` (a query). */
export function parseFormulaQuery(raw: Record<string, unknown>, path: string): Formula {
  const counter = { nodes: 0 };
  const expr = parseExpression(raw.formula, childPath(path, 'formula'), 0, counter);
  const defaults = new Map<string, unknown>();
  if (raw.defaults !== undefined && raw.defaults !== null)
    for (const [name, value] of Object.entries(asObject(raw.defaults, childPath(path, 'defaults')))) defaults.set(name, value);
  return { expr, defaults, nodes: counter.nodes, path: childPath(path, 'formula') };
}

function parseExpression(raw: unknown, path: string, depth: number, counter: { nodes: number }): FormulaExpr {
  counter.nodes++;
  if (counter.nodes > FORMULA_NODES) throw validationError(path, `a formula holds at most ${FORMULA_NODES} expressions`);
  if (depth > FORMULA_DEPTH) throw validationError(path, `a formula nests at most ${FORMULA_DEPTH} deep`);
  if (typeof raw === 'number') {
    if (!Number.isFinite(raw)) throw formatError(path, 'expected a finite number');
    return { op: 'const', value: raw };
  }
  if (typeof raw === 'string') return variable(raw, path);
  const body = asObject(raw, path);
  const keys = Object.keys(body);
  const operator = keys.length === 1 && OPERATORS.has(keys[0] as string) ? (keys[0] as string) : undefined;
  if (operator === undefined) return condition(body, path);
  const at = childPath(path, operator);
  const arg = body[operator];
  const sub = (value: unknown, where: string): FormulaExpr => parseExpression(value, where, depth + 1, counter);
  switch (operator) {
    case 'mult':
    case 'sum': {
      if (!Array.isArray(arg)) throw formatError(at, `expected a list of expressions, got ${describeJson(arg)}`);
      return { op: operator, args: arg.map((e, i) => sub(e, childPath(at, i))) };
    }
    case 'div': {
      const params = asObject(arg, at);
      const byZero = optionalNumber(params.by_zero_default, childPath(at, 'by_zero_default'));
      return {
        op: 'div',
        left: sub(params.left, childPath(at, 'left')),
        right: sub(params.right, childPath(at, 'right')),
        ...(byZero === undefined ? {} : { byZero }),
      };
    }
    case 'pow': {
      const params = asObject(arg, at);
      return { op: 'pow', base: sub(params.base, childPath(at, 'base')), exponent: sub(params.exponent, childPath(at, 'exponent')) };
    }
    case 'geo_distance': {
      const params = asObject(arg, at);
      const origin = asObject(params.origin, childPath(at, 'origin'));
      const lat = optionalNumber(origin.lat, childPath(childPath(at, 'origin'), 'lat'));
      const lon = optionalNumber(origin.lon, childPath(childPath(at, 'origin'), 'lon'));
      if (lat === undefined || lon === undefined || Math.abs(lat) > 90 || Math.abs(lon) > 180)
        throw formatError(childPath(at, 'origin'), 'expected {lat, lon} within [-90, 90] and [-180, 180]');
      return { op: 'geo', lat, lon, path: parseKeyPath(params.to, childPath(at, 'to')) };
    }
    case 'datetime': {
      const instant = typeof arg === 'string' ? parseDatetime(arg) : undefined;
      if (instant === undefined) throw formatError(at, `expected an RFC 3339 date-time, got ${describeJson(arg)}`);
      return { op: 'datetime', seconds: instant.ms / 1000 + instant.subMsNanos / 1e9 };
    }
    case 'datetime_key':
      return { op: 'datetime_key', path: parseKeyPath(arg, at) };
    case 'lin_decay':
    case 'exp_decay':
    case 'gauss_decay': {
      const params = asObject(arg, at);
      const kind = DECAYS[operator];
      const midpoint = optionalNumber(params.midpoint, childPath(at, 'midpoint')) ?? 0.5;
      const scale = optionalNumber(params.scale, childPath(at, 'scale')) ?? 1;
      let lambda: number;
      try {
        lambda = decayLambda(kind, midpoint, scale, at);
      } catch (error) {
        throw validationError(at, error instanceof Error ? error.message.replace(/^[^:]*: /, '') : String(error));
      }
      const target = params.target === undefined || params.target === null ? undefined : sub(params.target, childPath(at, 'target'));
      return { op: 'decay', kind, x: sub(params.x, childPath(at, 'x')), ...(target === undefined ? {} : { target }), lambda };
    }
    default:
      return { op: operator as (typeof UNARY)[number], arg: sub(arg, at) };
  }
}

/** `$score`, `$score[i]`, or a payload key. */
function variable(name: string, path: string): FormulaExpr {
  if (!name.startsWith('$')) return { op: 'payload', path: parseKeyPath(name, path) };
  if (name === '$score') return { op: 'score', index: 0 };
  const match = /^\$score\[(\d{1,4})\]$/.exec(name);
  if (match === null) throw formatError(path, `invalid reserved variable ${JSON.stringify(name)} (expected $score or $score[i])`);
  return { op: 'score', index: Number(match[1]) };
}

/** A filter condition: 1 for a point that matches it, 0 for one that does not. */
function condition(body: Record<string, unknown>, path: string): FormulaExpr {
  const filter = parseQdrantFilter({ must: [body] }, path) as Filter;
  const test = compileFilter(filter);
  return { op: 'condition', test: (payload, id) => test(payload, id) };
}
