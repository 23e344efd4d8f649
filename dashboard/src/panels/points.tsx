/**
 * The points browser: a page of points at a time in id order (POST …/points/scroll, each page
 * starting at the cursor the previous one gave), optionally only those matching a filter, each
 * with its payload as a tree and a preview of its vector; and a lookup of one point by its id.
 * The cursors of the pages seen are kept, so "previous" goes back to where that page began.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getPoint, scroll } from '../api';
import { FilterEditor, parseFilterText } from '../components/filter-editor';
import { JsonTree } from '../components/json-tree';
import { VectorPreview } from '../components/vector-preview';
import { maxPageWithVectors } from '../lib/listing';
import type { CollectionInfo, ListedPoint, PointRecord } from '../types';

const PAGE_SIZE = 20;

/** The filter the listing applies: its text as applied and the parsed filter. */
interface Applied {
  readonly text: string;
  readonly filter: unknown;
}

type Lookup = { kind: 'found'; point: PointRecord } | { kind: 'missing'; id: string } | { kind: 'error'; message: string };

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function PointRows({ points }: { points: readonly (ListedPoint | PointRecord)[] }) {
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

function PointTable({ points, testId }: { points: readonly (ListedPoint | PointRecord)[]; testId: string }) {
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
          point id <input type="text" data-testid="lookup-id" spellcheck={false} value={idText} onInput={(e) => setIdText(e.currentTarget.value)} />
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
  // Where each page seen so far begins: cursors[i] starts page i (undefined: the first id).
  const [cursors, setCursors] = useState<readonly (string | undefined)[]>([undefined]);
  const index = cursors.length - 1;
  // The page remembers the filter it was read with: until the next page arrives, the range describes
  // the rows on screen, not the filter just applied.
  const [page, setPage] = useState<{ index: number; points: ListedPoint[]; next: string | null; filtered: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [filterText, setFilterText] = useState('');
  const [applied, setApplied] = useState<Applied | null>(null);

  useEffect(() => setCursors([undefined]), [info.name]);
  const cursor = cursors[index];
  useEffect(() => {
    let current = true;
    setError(null);
    scroll(info.name, {
      limit: pageSize,
      ...(cursor === undefined ? {} : { cursor }),
      ...(applied === null ? {} : { filter: applied.filter }),
      with_payload: true,
      with_vector: true,
    })
      .then((answer) => current && setPage({ index, points: answer.points, next: answer.next_cursor, filtered: applied !== null }))
      .catch((e: unknown) => {
        if (!current) return;
        setPage(null);
        setError(message(e));
      });
    return () => {
      current = false;
    };
    // points_count: after a refresh that saw the collection change, the page is read again.
  }, [info.name, info.points_count, index, cursor, pageSize, applied]);

  function apply(text: string): void {
    try {
      const filter = parseFilterText(text);
      setApplied(filter === undefined ? null : { text, filter });
      setCursors([undefined]);
    } catch {
      // Not JSON: the editor already says so, and the listing stays as it is.
    }
  }

  const shown = page?.points ?? [];
  const first = (page?.index ?? 0) * pageSize + 1;
  const shownFiltered = page?.filtered ?? applied !== null;
  const next = page?.index === index ? page.next : null;
  const range =
    shown.length === 0
      ? !shownFiltered
        ? 'no points'
        : index === 0
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
        <button type="button" data-testid="points-prev" disabled={index === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          ← previous
        </button>
        <span data-testid="points-range">{range}</span>
        <button type="button" data-testid="points-next" disabled={next === null} onClick={() => next !== null && setCursors([...cursors, next])}>
          next →
        </button>
        <span class="muted">in id order (numeric ids by value, then the others by their text)</span>
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
