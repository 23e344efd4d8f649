/**
 * Rates between two scrapes of GET /metrics: requests per second (all, and searches), and the
 * latency of the requests answered in between, from the difference of the duration histogram's
 * buckets (quantiles interpolated linearly inside a bucket, as Prometheus' histogram_quantile).
 */
import { type Sample, total } from './prometheus';

export interface Scrape {
  /** Milliseconds (performance.now or Date.now; only differences matter). */
  readonly at: number;
  readonly samples: readonly Sample[];
}

export interface Rates {
  readonly qps: number;
  readonly searchQps: number;
  /** Milliseconds; null when no request was answered between the scrapes. */
  readonly meanMs: number | null;
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
}

const REQUESTS = 'kith_http_requests_total';
const DURATION = 'kith_http_request_duration_seconds';
const isSearch = (labels: Readonly<Record<string, string>>): boolean => (labels.route ?? '').includes('/points/search');

/** Cumulative bucket counts by upper bound, summed over every label set. */
function buckets(samples: readonly Sample[]): Map<number, number> {
  const byBound = new Map<number, number>();
  for (const s of samples) {
    if (s.name !== `${DURATION}_bucket`) continue;
    const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le);
    byBound.set(le, (byBound.get(le) ?? 0) + s.value);
  }
  return byBound;
}

/** The q-quantile (seconds) of cumulative counts per upper bound, sorted by bound. */
export function histogramQuantile(q: number, cumulative: readonly (readonly [number, number])[]): number | null {
  const count = cumulative.at(-1)?.[1] ?? 0;
  if (count <= 0) return null;
  const rank = q * count;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const [bound, cum] of cumulative) {
    if (cum >= rank) {
      // Past the last finite bound nothing is known but the bound itself.
      if (!Number.isFinite(bound)) return lowerBound;
      return cum === lowerCount ? bound : lowerBound + ((bound - lowerBound) * (rank - lowerCount)) / (cum - lowerCount);
    }
    lowerBound = bound;
    lowerCount = cum;
  }
  return lowerBound;
}

export function ratesBetween(before: Scrape, after: Scrape): Rates {
  const seconds = Math.max(1e-3, (after.at - before.at) / 1000);
  const qps = Math.max(0, total(after.samples, REQUESTS) - total(before.samples, REQUESTS)) / seconds;
  const searchQps = Math.max(0, total(after.samples, REQUESTS, isSearch) - total(before.samples, REQUESTS, isSearch)) / seconds;
  const count = total(after.samples, `${DURATION}_count`) - total(before.samples, `${DURATION}_count`);
  const sum = total(after.samples, `${DURATION}_sum`) - total(before.samples, `${DURATION}_sum`);
  const earlier = buckets(before.samples);
  const delta = [...buckets(after.samples)]
    .map(([bound, cum]): [number, number] => [bound, Math.max(0, cum - (earlier.get(bound) ?? 0))])
    .sort((a, b) => a[0] - b[0]);
  const ms = (seconds_: number | null): number | null => (seconds_ === null ? null : seconds_ * 1000);
  return {
    qps,
    searchQps,
    meanMs: count > 0 ? (sum / count) * 1000 : null,
    p50Ms: ms(histogramQuantile(0.5, delta)),
    p95Ms: ms(histogramQuantile(0.95, delta)),
    p99Ms: ms(histogramQuantile(0.99, delta)),
  };
}
