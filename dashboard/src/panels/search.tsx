/**
 * The search playground: a query by a stored point's id or by a pasted vector, an optional filter
 * (checked as it is typed), the hits with their scores, and how kith answered (explain).
 */
import { useState } from 'preact/hooks';
import { getPoint, search } from '../api';
import { ExplainView } from '../components/explain-view';
import { FilterEditor, parseFilterText } from '../components/filter-editor';
import { JsonTree } from '../components/json-tree';
import type { CollectionInfo, SearchAnswer, SearchRequest } from '../types';

type Mode = 'id' | 'vector';

/** A pasted vector: a JSON array, or numbers separated by commas or white space. */
export function parseVectorText(text: string, size: number): number[] {
  const trimmed = text.trim();
  const values: unknown = trimmed.startsWith('[')
    ? JSON.parse(trimmed)
    : trimmed
        .split(/[\s,]+/)
        .filter((t) => t !== '')
        .map(Number);
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw new Error('the vector must be a list of numbers');
  }
  if (values.length !== size) throw new Error(`the vector has ${values.length} numbers; this collection's vectors have ${size}`);
  return values as number[];
}

export function SearchPanel({ info }: { info: CollectionInfo }) {
  const [mode, setMode] = useState<Mode>('id');
  const [idText, setIdText] = useState('');
  const [vectorText, setVectorText] = useState('');
  const [filterText, setFilterText] = useState('');
  const [limit, setLimit] = useState(10);
  const [exact, setExact] = useState(false);
  /** params.ef for this search; empty: the collection's default (calibrated or ef_search). */
  const [efText, setEfText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<{ request: SearchRequest; result: SearchAnswer } | null>(null);

  async function run(): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      const vector = mode === 'id' ? (await getPoint(info.name, idText.trim(), info.vector_size)).vector : parseVectorText(vectorText, info.vector_size);
      const filter = parseFilterText(filterText);
      const request: SearchRequest = {
        vector,
        limit,
        ...(filter === undefined ? {} : { filter }),
        with_payload: true,
        params: { explain: true, ...(exact ? { exact: true } : {}), ...(efText.trim() === '' ? {} : { ef: Number(efText) }) },
      };
      setAnswer({ request, result: await search(info.name, request) });
    } catch (e) {
      setAnswer(null);
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="panel search">
      <form
        class="search-form"
        onSubmit={(event) => {
          event.preventDefault();
          void run();
        }}
      >
        <fieldset>
          <legend>Query</legend>
          <label>
            <input type="radio" name="mode" data-testid="mode-id" checked={mode === 'id'} onChange={() => setMode('id')} /> a stored point's vector
          </label>
          <label>
            <input type="radio" name="mode" data-testid="mode-vector" checked={mode === 'vector'} onChange={() => setMode('vector')} /> a vector
          </label>
          {mode === 'id' ? (
            <input type="text" data-testid="query-id" placeholder="point id" value={idText} onInput={(e) => setIdText(e.currentTarget.value)} />
          ) : (
            <textarea
              data-testid="query-vector"
              rows={3}
              placeholder={`${info.vector_size} numbers: [0.1, 0.2, …] or 0.1 0.2 …`}
              value={vectorText}
              onInput={(e) => setVectorText(e.currentTarget.value)}
            />
          )}
        </fieldset>
        <FilterEditor collection={info.name} vectorSize={info.vector_size} text={filterText} onText={setFilterText} />
        <div class="toolbar">
          <label>
            limit{' '}
            <input
              type="number"
              data-testid="limit"
              min={1}
              max={1000}
              value={limit}
              onInput={(e) => setLimit(Math.max(1, Math.min(1000, Number(e.currentTarget.value) || 1)))}
            />
          </label>
          {info.hnsw ? (
            <label>
              ef{' '}
              <input
                type="number"
                data-testid="ef"
                min={1}
                max={10000}
                placeholder={String(info.calibration?.ef ?? info.parameters.ef_search)}
                value={efText}
                onInput={(e) => setEfText(e.currentTarget.value)}
              />
            </label>
          ) : null}
          <label>
            <input type="checkbox" data-testid="exact" checked={exact} onChange={(e) => setExact(e.currentTarget.checked)} /> exact (full scan)
          </label>
          <button type="submit" data-testid="run-search" disabled={busy}>
            {busy ? 'searching…' : 'Search'}
          </button>
        </div>
      </form>
      {error !== null ? (
        <p class="error" data-testid="search-error">
          {error}
        </p>
      ) : null}
      {answer !== null ? (
        <div class="search-results">
          <p class="muted" data-testid="search-summary">
            {answer.result.points.length} hits in {(answer.result.time * 1000).toFixed(2)} ms (score:{' '}
            {info.distance === 'Euclid' ? 'L2 distance, lower is nearer' : `${info.distance.toLowerCase()} similarity, higher is nearer`})
          </p>
          {answer.result.explain !== undefined ? <ExplainView explain={answer.result.explain} pointsCount={info.points_count} /> : null}
          <table class="grid" data-testid="search-results">
            <thead>
              <tr>
                <th class="num">#</th>
                <th>id</th>
                <th class="num">score</th>
                <th>payload</th>
              </tr>
            </thead>
            <tbody>
              {answer.result.points.map((p, i) => (
                <tr key={p.id} data-point-id={p.id} data-score={String(p.score)}>
                  <td class="num">{i + 1}</td>
                  <td class="mono">{p.id}</td>
                  <td class="num mono">{p.score.toFixed(6)}</td>
                  <td>
                    <JsonTree value={p.payload ?? {}} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
}
