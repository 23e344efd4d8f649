/**
 * A formula's JSON (Qdrant's expression shape, which both ports take) parsed into the engine's
 * formula (search/formula.ts): numbers, variables (`$score`, `$score[i]`, payload keys), filter
 * conditions (1 when a point matches), `geo_distance`, `datetime`, `datetime_key`, `mult`, `sum`,
 * `neg`, `abs`, `div`, `sqrt`, `pow`, `exp`, `log10`, `ln` and the `lin_decay`, `exp_decay`,
 * `gauss_decay` functions. An expression holds at most FORMULA_NODES nodes, FORMULA_DEPTH deep:
 * its cost per candidate is counted before the query runs.
 *
 * The ports differ only in how they word errors and read a condition (each its own filter
 * dialect), so those come in a `FormulaDialect`; the grammar lives here once.
 */
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import { parseDatetime } from '../payload/datetime.js';
import { compileFilter } from '../payload/filter-compile.js';
import { filterReads } from '../payload/thread-filter.js';
import { parseKeyPath } from '../payload/filter-parse.js';
import type { Filter } from '../payload/filter-types.js';
import { decayLambda, type Formula, type FormulaExpr } from './formula.js';

/** Nodes of one formula: each is evaluated once per candidate. */
export const FORMULA_NODES = 1024;
/** Nesting of one formula. */
export const FORMULA_DEPTH = 64;

/** How a port words a formula's errors and reads its conditions. */
export interface FormulaDialect {
  /** A value of the wrong JSON shape (Qdrant: its 400 format error). */
  malformed(path: string, problem: string): Error;
  /** A well-formed value out of bounds (Qdrant: its 422 validation error). */
  invalid(path: string, problem: string): Error;
  /** A filter condition at `path` (an object that names no operator), as the port's filters read it. */
  condition(body: Record<string, unknown>, path: string): Filter;
}

const UNARY = ['neg', 'abs', 'sqrt', 'exp', 'log10', 'ln'] as const;
const DECAYS = { lin_decay: 'lin', exp_decay: 'exp', gauss_decay: 'gauss' } as const;
const OPERATORS = new Set<string>(['mult', 'sum', 'div', 'pow', 'geo_distance', 'datetime', 'datetime_key', ...UNARY, ...Object.keys(DECAYS)]);

/**
 * The formula whose expression is `expression` (at `path`) with `defaults` (at `defaultsPath`):
 * values by variable as written (`price`, `$score[1]`) for points that lack them.
 */
export function parseFormula(dialect: FormulaDialect, expression: unknown, path: string, defaults: unknown, defaultsPath: string): Formula {
  const counter = { nodes: 0 };
  const expr = new FormulaParser(dialect, counter).expression(expression, path, 0);
  const values = new Map<string, unknown>();
  if (defaults !== undefined && defaults !== null)
    for (const [name, value] of Object.entries(objectAt(dialect, defaults, defaultsPath))) values.set(name, value);
  return { expr, defaults: values, nodes: counter.nodes, path };
}

function objectAt(dialect: FormulaDialect, raw: unknown, path: string): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw dialect.malformed(path, `expected an object, got ${describeJson(raw)}`);
  return raw as Record<string, unknown>;
}

class FormulaParser {
  constructor(
    private readonly dialect: FormulaDialect,
    private readonly counter: { nodes: number },
  ) {}

  private object(raw: unknown, path: string): Record<string, unknown> {
    return objectAt(this.dialect, raw, path);
  }

  private number(raw: unknown, path: string): number | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'number' || !Number.isFinite(raw)) throw this.dialect.malformed(path, `expected a number, got ${describeJson(raw)}`);
    return raw;
  }

  expression(raw: unknown, path: string, depth: number): FormulaExpr {
    this.counter.nodes++;
    if (this.counter.nodes > FORMULA_NODES) throw this.dialect.invalid(path, `a formula holds at most ${FORMULA_NODES} expressions`);
    if (depth > FORMULA_DEPTH) throw this.dialect.invalid(path, `a formula nests at most ${FORMULA_DEPTH} deep`);
    if (typeof raw === 'number') {
      if (!Number.isFinite(raw)) throw this.dialect.malformed(path, 'expected a finite number');
      return { op: 'const', value: raw };
    }
    if (typeof raw === 'string') return this.variable(raw, path);
    const body = this.object(raw, path);
    const keys = Object.keys(body);
    const operator = keys.length === 1 && OPERATORS.has(keys[0] as string) ? (keys[0] as string) : undefined;
    if (operator === undefined) {
      const condition = this.dialect.condition(body, path);
      // A formula's conditions are compiled here, before any segment is at hand to bind has_vector to.
      if (filterReads(condition).vectors)
        throw this.dialect.malformed(path, "`has_vector` in a formula condition is not supported: give it in the query's filter");
      const test = compileFilter(condition);
      return { op: 'condition', test: (payload, id) => test(payload, id) };
    }
    return this.operation(operator, body[operator], childPath(path, operator), depth);
  }

  private operation(operator: string, arg: unknown, at: string, depth: number): FormulaExpr {
    const sub = (value: unknown, where: string): FormulaExpr => this.expression(value, where, depth + 1);
    switch (operator) {
      case 'mult':
      case 'sum': {
        if (!Array.isArray(arg)) throw this.dialect.malformed(at, `expected a list of expressions, got ${describeJson(arg)}`);
        return { op: operator, args: arg.map((e, i) => sub(e, childPath(at, i))) };
      }
      case 'div': {
        const params = this.object(arg, at);
        const byZero = this.number(params.by_zero_default, childPath(at, 'by_zero_default'));
        return {
          op: 'div',
          left: sub(params.left, childPath(at, 'left')),
          right: sub(params.right, childPath(at, 'right')),
          ...(byZero === undefined ? {} : { byZero }),
        };
      }
      case 'pow': {
        const params = this.object(arg, at);
        return { op: 'pow', base: sub(params.base, childPath(at, 'base')), exponent: sub(params.exponent, childPath(at, 'exponent')) };
      }
      case 'geo_distance': {
        const params = this.object(arg, at);
        const originPath = childPath(at, 'origin');
        const origin = this.object(params.origin, originPath);
        const lat = this.number(origin.lat, childPath(originPath, 'lat'));
        const lon = this.number(origin.lon, childPath(originPath, 'lon'));
        if (lat === undefined || lon === undefined || Math.abs(lat) > 90 || Math.abs(lon) > 180)
          throw this.dialect.malformed(originPath, 'expected {lat, lon} within [-90, 90] and [-180, 180]');
        return { op: 'geo', lat, lon, path: parseKeyPath(params.to, childPath(at, 'to')) };
      }
      case 'datetime': {
        const instant = typeof arg === 'string' ? parseDatetime(arg) : undefined;
        if (instant === undefined) throw this.dialect.malformed(at, `expected an RFC 3339 date-time, got ${describeJson(arg)}`);
        return { op: 'datetime', seconds: instant.ms / 1000 + instant.subMsNanos / 1e9 };
      }
      case 'datetime_key':
        return { op: 'datetime_key', path: parseKeyPath(arg, at) };
      case 'lin_decay':
      case 'exp_decay':
      case 'gauss_decay':
        return this.decay(DECAYS[operator], this.object(arg, at), at, sub);
      default:
        return { op: operator as (typeof UNARY)[number], arg: sub(arg, at) };
    }
  }

  private decay(kind: 'lin' | 'exp' | 'gauss', params: Record<string, unknown>, at: string, sub: (value: unknown, where: string) => FormulaExpr): FormulaExpr {
    const midpoint = this.number(params.midpoint, childPath(at, 'midpoint')) ?? 0.5;
    const scale = this.number(params.scale, childPath(at, 'scale')) ?? 1;
    let lambda: number;
    try {
      lambda = decayLambda(kind, midpoint, scale, at);
    } catch (error) {
      throw this.dialect.invalid(at, error instanceof Error ? error.message.replace(/^[^:]*: /, '') : String(error));
    }
    const target = params.target === undefined || params.target === null ? undefined : sub(params.target, childPath(at, 'target'));
    return { op: 'decay', kind, x: sub(params.x, childPath(at, 'x')), ...(target === undefined ? {} : { target }), lambda };
  }

  /** `$score`, `$score[i]`, or a payload key. */
  private variable(name: string, path: string): FormulaExpr {
    if (!name.startsWith('$')) return { op: 'payload', path: parseKeyPath(name, path) };
    if (name === '$score') return { op: 'score', index: 0 };
    const match = /^\$score\[(\d{1,4})\]$/.exec(name);
    if (match === null) throw this.dialect.malformed(path, `invalid reserved variable ${JSON.stringify(name)} (expected $score or $score[i])`);
    return { op: 'score', index: Number(match[1]) };
  }
}
