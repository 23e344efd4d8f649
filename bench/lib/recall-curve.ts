/**
 * Reading a recall-vs-QPS sweep: the Pareto frontier (no other point has both higher recall and
 * higher QPS) and the QPS at a target recall, interpolated on the frontier between the two points
 * around the target, linearly in recall and in log(QPS) (QPS falls roughly exponentially as recall
 * nears 1).
 */

export interface CurvePoint {
  readonly recall: number;
  readonly qps: number;
  /** null for an exact engine. */
  readonly ef: number | null;
}

export type AtRecallHow =
  /** Between two measured points. */
  | 'interpolated'
  /** A measured point has exactly this recall. */
  | 'measured'
  /** Even the fastest measured point is above the target: the true figure is at least this (a lower ef would be faster). */
  | 'lower bound'
  | 'not reached';

export interface AtRecall {
  readonly target: number;
  readonly qps: number | null;
  /** The ef at which the target would be met (interpolated the same way; not an integer). */
  readonly ef: number | null;
  readonly how: AtRecallHow;
}

/** Frontier points, recall ascending (so QPS descending). */
export function paretoFrontier(points: readonly CurvePoint[]): CurvePoint[] {
  const sorted = [...points].filter((p) => Number.isFinite(p.recall) && p.qps > 0).sort((a, b) => b.recall - a.recall || b.qps - a.qps);
  const kept: CurvePoint[] = [];
  let best = Number.NEGATIVE_INFINITY;
  for (const p of sorted) {
    if (p.qps > best) {
      kept.push(p);
      best = p.qps;
    }
  }
  return kept.reverse();
}

export function qpsAtRecall(points: readonly CurvePoint[], target: number): AtRecall {
  const frontier = paretoFrontier(points);
  const at = frontier.findIndex((p) => p.recall >= target);
  if (at < 0) return { target, qps: null, ef: null, how: 'not reached' };
  const hi = frontier[at] as CurvePoint;
  if (hi.recall === target) return { target, qps: hi.qps, ef: hi.ef, how: 'measured' };
  if (at === 0) return { target, qps: hi.qps, ef: hi.ef, how: 'lower bound' };
  const lo = frontier[at - 1] as CurvePoint;
  const f = (target - lo.recall) / (hi.recall - lo.recall);
  const qps = Math.exp(Math.log(lo.qps) + f * (Math.log(hi.qps) - Math.log(lo.qps)));
  const ef = lo.ef === null || hi.ef === null ? null : lo.ef + f * (hi.ef - lo.ef);
  return { target, qps, ef, how: 'interpolated' };
}
