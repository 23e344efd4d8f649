/**
 * Live charts from GET /metrics, scraped every few seconds while the panel is open: requests per
 * second (all and searches) and latency quantiles of the requests answered between two scrapes,
 * plus the current gauges.
 */
import { useEffect, useState } from 'preact/hooks';
import { metricsText } from '../api';
import { UplotChart } from '../components/uplot-chart';
import { parsePrometheus, type Sample, total } from '../lib/prometheus';
import { type Rates, ratesBetween, type Scrape } from '../lib/rates';

export const POLL_MS = 2000;
/** Five minutes of history at one scrape every two seconds. */
const HISTORY = 150;

interface Point {
  readonly time: number;
  readonly rates: Rates;
}

function gauges(samples: readonly Sample[]): [string, string][] {
  const strategies = samples.filter((s) => s.name === 'kith_searches_total').map((s) => `${s.labels.strategy}: ${s.value}`);
  return [
    ['collections', String(total(samples, 'kith_collections'))],
    ['points', total(samples, 'kith_points').toLocaleString('en')],
    ['write queue depth', String(total(samples, 'kith_write_queue_depth'))],
    ['requests answered', total(samples, 'kith_http_requests_total').toLocaleString('en')],
    ['searches by strategy', strategies.length === 0 ? 'none yet' : strategies.join(', ')],
    ['event-loop lag', `${(total(samples, 'nodejs_eventloop_lag_seconds') * 1000).toFixed(2)} ms`],
    ['resident memory', `${(total(samples, 'process_resident_memory_bytes') / 1048576).toFixed(1)} MiB`],
  ];
}

export function MetricsPanel() {
  const [history, setHistory] = useState<Point[]>([]);
  const [latest, setLatest] = useState<Scrape | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let previous: Scrape | null = null;
    let stopped = false;
    async function scrape(): Promise<void> {
      try {
        const samples = parsePrometheus(await metricsText());
        if (stopped) return;
        const now: Scrape = { at: Date.now(), samples };
        const before = previous;
        if (before !== null) setHistory((h) => [...h.slice(-(HISTORY - 1)), { time: now.at / 1000, rates: ratesBetween(before, now) }]);
        previous = now;
        setLatest(now);
        setError(null);
      } catch (e) {
        if (!stopped) setError(e instanceof Error ? e.message : String(e));
      }
    }
    void scrape();
    const timer = setInterval(() => void scrape(), POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);

  const times = history.map((p) => p.time);
  const last = history.at(-1)?.rates;
  const peakSearchQps = history.reduce((peak, p) => Math.max(peak, p.rates.searchQps), 0);
  return (
    <div class="panel">
      {error !== null ? <p class="error">{error}</p> : null}
      <p class="muted" data-testid="metrics-now" data-peak-search-qps={peakSearchQps}>
        {last === undefined
          ? 'waiting for a second scrape…'
          : `now: ${last.qps.toFixed(1)} requests/s (${last.searchQps.toFixed(1)} searches/s), p50 ${last.p50Ms?.toFixed(2) ?? '–'} ms, p99 ${last.p99Ms?.toFixed(2) ?? '–'} ms; peak in view: ${peakSearchQps.toFixed(1)} searches/s`}
      </p>
      <div class="charts">
        <UplotChart
          title="Requests per second"
          unit="req/s"
          testId="chart-qps"
          series={[
            { label: 'all', colour: '#1f77b4' },
            { label: 'searches', colour: '#ff7f0e' },
          ]}
          data={[times, history.map((p) => p.rates.qps), history.map((p) => p.rates.searchQps)]}
        />
        <UplotChart
          title="Latency"
          unit="ms"
          testId="chart-latency"
          series={[
            { label: 'p50', colour: '#2ca02c' },
            { label: 'p95', colour: '#ff7f0e' },
            { label: 'p99', colour: '#d62728' },
          ]}
          data={[times, history.map((p) => p.rates.p50Ms), history.map((p) => p.rates.p95Ms), history.map((p) => p.rates.p99Ms)]}
        />
      </div>
      {latest !== null ? (
        <dl class="details" data-testid="metrics-gauges">
          {gauges(latest.samples).map(([term, value]) => (
            <div key={term}>
              <dt>{term}</dt>
              <dd>{value}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      <p class="muted">Scraped from GET /metrics every {POLL_MS / 1000} s; the dashboard's own scrapes are not counted.</p>
    </div>
  );
}
