/**
 * The points browser: a page of points at a time (lib/listing.ts says how kith's API is paged),
 * each with its payload as a tree and a preview of its vector.
 */
import { useEffect, useState } from 'preact/hooks';
import { JsonTree } from '../components/json-tree';
import { VectorPreview } from '../components/vector-preview';
import { listPage, MAX_OFFSET, maxPageWithVectors } from '../lib/listing';
import type { CollectionInfo, ScoredPoint } from '../types';

const PAGE_SIZE = 20;

export function PointsPanel({ info }: { info: CollectionInfo }) {
  const pageSize = Math.min(PAGE_SIZE, maxPageWithVectors(info.vector_size));
  const [offset, setOffset] = useState(0);
  const [page, setPage] = useState<{ offset: number; points: ScoredPoint[] } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => setOffset(0), [info.name]);
  useEffect(() => {
    let current = true;
    setError(null);
    listPage(info.name, info.vector_size, offset, pageSize, true)
      .then((points) => current && setPage({ offset, points }))
      .catch((e: unknown) => current && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      current = false;
    };
    // points_count: after a refresh that saw the collection change, the page is read again.
  }, [info.name, info.vector_size, info.points_count, offset, pageSize]);

  const last = Math.min(info.points_count, MAX_OFFSET + pageSize);
  const shown = page?.points ?? [];
  return (
    <div class="panel">
      <div class="toolbar">
        <button type="button" data-testid="points-prev" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - pageSize))}>
          ← previous
        </button>
        <span data-testid="points-range">
          {shown.length === 0 ? 'no points' : `${(page?.offset ?? 0) + 1}–${(page?.offset ?? 0) + shown.length} of ${info.points_count.toLocaleString('en')}`}
        </span>
        <button
          type="button"
          data-testid="points-next"
          disabled={offset + pageSize >= last}
          onClick={() => setOffset(Math.min(MAX_OFFSET, offset + pageSize))}
        >
          next →
        </button>
        <span class="muted">ordered by an exact search for the unit vector e₁ (kith's API has no listing)</span>
      </div>
      {error !== null ? <p class="error">{error}</p> : null}
      <table class="grid" data-testid="points-table">
        <thead>
          <tr>
            <th>id</th>
            <th>version</th>
            <th>payload</th>
            <th>vector</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((p) => (
            <tr key={p.id} data-point-id={p.id}>
              <td class="mono">{p.id}</td>
              <td class="mono">{String(p.version)}</td>
              <td>
                <JsonTree value={p.payload ?? {}} />
              </td>
              <td>{p.vector !== undefined ? <VectorPreview vector={p.vector} /> : null}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
