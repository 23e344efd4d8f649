/**
 * The points browser: a page of points at a time (lib/listing.ts says how kith's API is paged),
 * optionally only those matching a filter, each with its payload as a tree and a preview of its
 * vector; and a lookup of one point by its id.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getPoint } from '../api';
import { FilterEditor, parseFilterText } from '../components/filter-editor';
import { JsonTree } from '../components/json-tree';
import { VectorPreview } from '../components/vector-preview';
import { listPage, MAX_OFFSET, maxPageWithVectors } from '../lib/listing';
import type { CollectionInfo, PointRecord, ScoredPoint } from '../types';

const PAGE_SIZE = 20;

/** The filter the listing applies: its text as applied and the parsed filter. */
interface Applied {
  readonly text: string;
  readonly filter: unknown;
}

type Lookup = { kind: 'found'; point: PointRecord } | { kind: 'missing'; id: string } | { kind: 'error'; message: string };

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function PointRows({ points }: { points: readonly (ScoredPoint | PointRecord)[] }) {
  return (
    <>
      {points.map((p) => (
        <tr key={p.id} data-point-id={p.id}>
          <td class="mono" data-testid="point-id">
            {p.id}
          </td>
          <td class="mono" data-testid="point-version">
            {String(p.version)}
          </td>
          <td>
            <JsonTree value={p.payload ?? {}} />
          </td>
          <td>{p.vector !== undefined ? <VectorPreview vector={p.vector} /> : null}</td>
        </tr>
      ))}
    </>
  );
}

function PointTable({ points, testId }: { points: readonly (ScoredPoint | PointRecord)[]; testId: string }) {
  return (
    <table class="grid" data-testid={testId}>
      <thead>
        <tr>
          <th>id</th>
          <th>version</th>
          <th>payload</th>
          <th>vector</th>
        </tr>
      </thead>
      <tbody>
        <PointRows points={points} />
      </tbody>
    </table>
  );
}

/** Type an id, see that point (GET …/points/{id}); an unknown id is said so. */
function IdLookup({ collection, vectorSize }: { collection: string; vectorSize: number }) {
  const [idText, setIdText] = useState('');
  const [lookup, setLookup] = useState<Lookup | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(): Promise<void> {
    // The id as typed: spaces are part of an id (" 7" is not "7").
    const id = idText;
    setBusy(true);
    try {
      setLookup({ kind: 'found', point: await getPoint(collection, id, vectorSize) });
    } catch (e) {
      setLookup(e instanceof ApiError && e.status === 404 ? { kind: 'missing', id } : { kind: 'error', message: message(e) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="point-lookup">
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <label>
          point id{' '}
          <input type="text" data-testid="lookup-id" spellcheck={false} value={idText} onInput={(e) => setIdText(e.currentTarget.value)} />
        </label>
        <button type="submit" data-testid="lookup-run" disabled={busy || idText === ''}>
          look up
        </button>
        {lookup !== null ? (
          <button type="button" data-testid="lookup-close" onClick={() => setLookup(null)}>
            close
          </button>
        ) : null}
      </form>
      {lookup?.kind === 'found' ? <PointTable points={[lookup.point]} testId="lookup-result" /> : null}
      {lookup?.kind === 'missing' ? (
        <p class="error" data-testid="lookup-missing">
          no such point: {JSON.stringify(lookup.id)}
        </p>
      ) : null}
      {lookup?.kind === 'error' ? (
        <p class="error" data-testid="lookup-error">
          {lookup.message}
        </p>
      ) : null}
    </section>
  );
}

export function PointsPanel({ info }: { info: CollectionInfo }) {
  const pageSize = Math.min(PAGE_SIZE, maxPageWithVectors(info.vector_size));
  const [offset, setOffset] = useState(0);
  // The page remembers the filter it was read with: until the next page arrives, the range describes
  // the rows on screen, not the filter just applied.
  const [page, setPage] = useState<{ offset: number; points: ScoredPoint[]; filtered: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [filterText, setFilterText] = useState('');
  const [applied, setApplied] = useState<Applied | null>(null);

  useEffect(() => setOffset(0), [info.name]);
  useEffect(() => {
    let current = true;
    setError(null);
    listPage(info.name, info.vector_size, offset, pageSize, true, applied?.filter)
      .then((points) => current && setPage({ offset, points, filtered: applied !== null }))
      .catch((e: unknown) => {
        if (!current) return;
        setPage(null);
        setError(message(e));
      });
    return () => {
      current = false;
    };
    // points_count: after a refresh that saw the collection change, the page is read again.
  }, [info.name, info.vector_size, info.points_count, offset, pageSize, applied]);

  function apply(text: string): void {
    try {
      const filter = parseFilterText(text);
      setApplied(filter === undefined ? null : { text, filter });
      setOffset(0);
    } catch {
      // Not JSON: the editor already says so, and the listing stays as it is.
    }
  }

  const shown = page?.points ?? [];
  const first = (page?.offset ?? 0) + 1;
  const shownFiltered = page?.filtered ?? applied !== null;
  // Without a filter the collection's size says where the pages end; with one, a short page does.
  const hasNext = applied === null ? offset + pageSize < Math.min(info.points_count, MAX_OFFSET + pageSize) : shown.length === pageSize && offset < MAX_OFFSET;
  const range =
    shown.length === 0
      ? !shownFiltered
        ? 'no points'
        : offset === 0
          ? 'no point matches the filter'
          : 'no more matching points'
      : `${first}–${first + shown.length - 1} of ${shownFiltered ? 'the points matching the filter' : info.points_count.toLocaleString('en')}`;
  return (
    <div class="panel">
      <IdLookup key={info.name} collection={info.name} vectorSize={info.vector_size} />
      <form
        class="points-filter"
        onSubmit={(event) => {
          event.preventDefault();
          apply(filterText);
        }}
      >
        <FilterEditor collection={info.name} vectorSize={info.vector_size} text={filterText} onText={setFilterText} />
        <div class="toolbar">
          <button type="submit" data-testid="filter-apply">
            apply filter
          </button>
          <button
            type="button"
            data-testid="filter-clear"
            disabled={applied === null && filterText === ''}
            onClick={() => {
              setFilterText('');
              apply('');
            }}
          >
            clear
          </button>
          {applied !== null ? (
            <span class="muted" data-testid="filter-applied">
              showing only the points that match the filter applied
              {applied.text !== filterText ? ' (edited since: apply again to use the edit)' : ''}
            </span>
          ) : null}
        </div>
      </form>
      <div class="toolbar">
        <button type="button" data-testid="points-prev" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - pageSize))}>
          ← previous
        </button>
        <span data-testid="points-range">{range}</span>
        <button type="button" data-testid="points-next" disabled={!hasNext} onClick={() => setOffset(Math.min(MAX_OFFSET, offset + pageSize))}>
          next →
        </button>
        <span class="muted">ordered by an exact search for the unit vector e₁ (kith's API has no listing)</span>
      </div>
      {error !== null ? (
        <p class="error" data-testid="points-error">
          {error}
        </p>
      ) : null}
      <PointTable points={shown} testId="points-table" />
    </div>
  );
}
