/** Order statistics for benchmark samples. */

/** The q-quantile (0 ≤ q ≤ 1) by linear interpolation between closest ranks; NaN when empty. */
export function quantile(samples: ArrayLike<number>, q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const pos = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}

export function median(samples: ArrayLike<number>): number {
  return quantile(samples, 0.5);
}

export function mean(samples: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] as number;
  return samples.length === 0 ? Number.NaN : sum / samples.length;
}

export interface LatencySummary {
  readonly p50_ms: number;
  readonly p90_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly mean_ms: number;
}

export function summarizeLatencies(ms: ArrayLike<number>): LatencySummary {
  return {
    p50_ms: round(quantile(ms, 0.5), 3),
    p90_ms: round(quantile(ms, 0.9), 3),
    p99_ms: round(quantile(ms, 0.99), 3),
    max_ms: round(quantile(ms, 1), 3),
    mean_ms: round(mean(ms), 3),
  };
}

/** CPU time spent over a wall-clock span, as cores kept busy (2 decimals). */
export function coresBusy(cpuMs: number, wallSeconds: number): number {
  return round(cpuMs / 1000 / wallSeconds, 2);
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
