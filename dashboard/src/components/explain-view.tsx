/**
 * How kith answered a search (the `explain` of params.explain), drawn: the strategy, whether the
 * answer is exact, and bars for the filter's estimated matches (only their range when the payload
 * indexes could not count them), the candidates the payload indexes named and the distances
 * computed, against the collection's size; and the HNSW beam width (ef) the walk used and where it came from.
 */
import type { Explain } from '../types';

const STRATEGIES: Record<Explain['strategy'], string> = {
  graph: 'HNSW graph walk',
  'graph-filtered': 'HNSW walk returning only matches',
  'candidates-exact': 'exact scoring of the candidates the payload indexes named',
  'flat-scan': 'exact scan of every point',
  'sparse-index': 'exact walk of a sparse vector’s inverted index',
};

const EF_SOURCES: Record<NonNullable<Explain['ef_source']>, string> = {
  request: 'given with this search (params.ef)',
  collection: 'the collection’s ef_search',
  calibrated: 'calibrated to reach the collection’s target recall',
  default: 'the default (not calibrated yet)',
};

const BAR_WIDTH = 320;

/** `value` null: only the range is known (an estimate the payload indexes could not count). */
function Bar({ label, value, low, high, of, testId }: { label: string; value: number | null; low?: number; high?: number; of: number; testId: string }) {
  const scale = (n: number): number => (of > 0 ? Math.min(1, n / of) * BAR_WIDTH : 0);
  return (
    <div class="explain-bar">
      <span class="explain-label">{label}</span>
      <svg width={BAR_WIDTH} height={14} viewBox={`0 0 ${BAR_WIDTH} 14`} aria-hidden="true">
        <rect x={0} y={2} width={BAR_WIDTH} height={10} class="bar-track" />
        {low !== undefined && high !== undefined ? (
          <rect x={scale(low)} y={2} width={Math.max(1, scale(high) - scale(low))} height={10} class="bar-range" />
        ) : null}
        {value !== null ? <rect x={0} y={2} width={scale(value)} height={10} class="bar-value" /> : null}
      </svg>
      <span class="explain-number" data-testid={testId}>
        {value !== null ? value.toLocaleString('en') : 'not counted'}
        {low !== undefined && high !== undefined ? ` (${low.toLocaleString('en')}–${high.toLocaleString('en')})` : ''}
      </span>
    </div>
  );
}

export function ExplainView({ explain, pointsCount }: { explain: Explain; pointsCount: number }) {
  return (
    <section class="explain" data-testid="explain">
      <h3>How it was answered</h3>
      <p>
        <span class={`badge strategy-${explain.strategy}`} data-testid="explain-strategy">
          {explain.strategy}
        </span>{' '}
        {STRATEGIES[explain.strategy]}
        {explain.fallback ? ' (the filtered walk came back short: the matches were scored exactly)' : ''}
      </p>
      <p>
        <span class={`badge ${explain.exact ? 'exact' : 'approximate'}`} data-testid="explain-exact">
          {explain.exact ? 'exact' : 'approximate'}
        </span>{' '}
        {explain.exact ? 'every matching point was scored' : 'approximate nearest neighbours (HNSW)'}
      </p>
      {explain.ef !== null ? (
        <p data-testid="explain-ef">
          ef {explain.ef}
          {explain.ef_source !== null ? `: ${EF_SOURCES[explain.ef_source]}` : ''}
        </p>
      ) : null}
      {explain.estimate !== null ? (
        <Bar
          label="estimated matches"
          value={explain.estimate.counted || explain.estimate.min === explain.estimate.max ? explain.estimate.expected : null}
          low={explain.estimate.min}
          high={explain.estimate.max}
          of={pointsCount}
          testId="explain-estimate"
        />
      ) : (
        <p class="muted">no filter: no estimate</p>
      )}
      {explain.candidates !== null ? <Bar label="index candidates" value={explain.candidates} of={pointsCount} testId="explain-candidates" /> : null}
      <Bar label="distances computed" value={explain.scored} of={pointsCount} testId="explain-scored" />
      <p class="muted">
        of {pointsCount.toLocaleString('en')} points
        {explain.sample !== null ? `; a sample of ${explain.sample.size} decided (${explain.sample.matched} matched)` : ''}
        {explain.indexed_keys.length > 0 ? `; payload indexes consulted: ${explain.indexed_keys.join(', ')}` : ''}
      </p>
    </section>
  );
}
