/**
 * A 2-D projection of a sample of points: the first two principal components of their vectors
 * (lib/pca.ts, computed in the page), coloured by a chosen payload field.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ScatterCanvas } from '../components/scatter-canvas';
import { colourBy } from '../lib/colours';
import { pca2 } from '../lib/pca';
import { samplePoints } from '../lib/sample';
import type { CollectionInfo, ScoredPoint } from '../types';

const SIZES = [200, 500, 1000, 2000];
/**
 * Vector components the page fetches and projects at most (points × dimension): two million keep
 * the download to tens of megabytes of JSON and each power-iteration step to a few milliseconds,
 * so high-dimensional collections get a smaller sample instead of a frozen tab.
 */
const COMPONENT_BUDGET = 2_000_000;

export function ProjectionPanel({ info }: { info: CollectionInfo }) {
  const [chosenSize, setSize] = useState(500);
  const cap = Math.max(50, Math.floor(COMPONENT_BUDGET / info.vector_size));
  const size = Math.min(chosenSize, cap);
  const [points, setPoints] = useState<ScoredPoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [field, setField] = useState<string>('');

  useEffect(() => {
    let current = true;
    setPoints(null);
    setError(null);
    samplePoints(info.name, info.vector_size, info.points_count, size)
      .then((sample) => current && setPoints(sample))
      .catch((e: unknown) => current && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      current = false;
    };
  }, [info.name, info.vector_size, info.points_count, size]);

  const fields = useMemo(() => {
    const keys = new Set<string>();
    for (const p of points ?? []) for (const key of Object.keys(p.payload ?? {})) keys.add(key);
    return [...keys].sort();
  }, [points]);
  const chosen = fields.includes(field) ? field : (fields[0] ?? '');
  const projection = useMemo(() => (points === null || points.length < 2 ? null : pca2(points.map((p) => p.vector ?? []))), [points]);
  const colouring = useMemo(() => colourBy((points ?? []).map((p) => (chosen === '' ? undefined : p.payload?.[chosen]))), [points, chosen]);

  return (
    <div class="panel">
      <div class="toolbar">
        <label>
          sample{' '}
          <select data-testid="sample-size" value={String(chosenSize)} onChange={(e) => setSize(Number(e.currentTarget.value))}>
            {SIZES.map((s) => (
              <option key={s} value={String(s)}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          colour by{' '}
          <select data-testid="colour-field" value={chosen} onChange={(e) => setField(e.currentTarget.value)}>
            {fields.length === 0 ? <option value="">(no payload fields)</option> : null}
            {fields.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
        {points !== null ? <span class="muted">{points.length} points</span> : <span class="muted">loading…</span>}
        {chosenSize > cap ? (
          <span class="muted">
            (at most {cap} points of {info.vector_size} dimensions)
          </span>
        ) : null}
      </div>
      {error !== null ? <p class="error">{error}</p> : null}
      {points !== null && projection === null ? <p class="muted">A projection needs at least two points.</p> : null}
      {projection !== null ? (
        <div class="projection">
          <ScatterCanvas
            xs={projection.xs}
            ys={projection.ys}
            colours={colouring.colours}
            xLabel={`PC1 (${(projection.explained[0] * 100).toFixed(1)}% of variance)`}
            yLabel={`PC2 (${(projection.explained[1] * 100).toFixed(1)}%)`}
          />
          <ul class="legend" data-testid="projection-legend">
            {colouring.legend.entries.map((entry) => (
              <li key={entry.label}>
                <svg width={12} height={12} aria-hidden="true">
                  <circle cx={6} cy={6} r={5} fill={entry.colour} />
                </svg>{' '}
                {entry.label}
              </li>
            ))}
            {colouring.legend.kind === 'numbers' ? <li class="muted">(numbers: blue = lowest, red = highest)</li> : null}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
