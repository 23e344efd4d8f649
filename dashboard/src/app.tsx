/**
 * The page: a header (pages, the selected collection), the API key prompt when the server asks
 * for one, and the current panel.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, listCollections, onUnauthorized } from './api';
import { KeyPrompt } from './components/key-prompt';
import { forgetKey, loadKey, saveKey } from './key-store';
import { CollectionsPanel } from './panels/collections';
import { MetricsPanel } from './panels/metrics';
import { PointsPanel } from './panels/points';
import { ProjectionPanel } from './panels/projection';
import { SearchPanel } from './panels/search';
import { PAGES, usePage } from './routes';
import type { CollectionInfo } from './types';

const SELECTED = 'kith.collection';

export function App() {
  const page = usePage();
  const [collections, setCollections] = useState<CollectionInfo[] | null>(null);
  const [selected, setSelected] = useState<string | null>(() => sessionStorage.getItem(SELECTED));
  const [needKey, setNeedKey] = useState(false);
  const [hasKey, setHasKey] = useState(() => loadKey() !== null);
  const [error, setError] = useState<string | null>(null);

  const refresh = useCallback(async () => {
    try {
      const list = await listCollections();
      setCollections(list);
      setNeedKey(false);
      setError(null);
      setSelected((current) => (current !== null && list.some((c) => c.name === current) ? current : (list[0]?.name ?? null)));
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 401)) setError(e instanceof Error ? e.message : String(e));
    }
  }, []);

  useEffect(() => onUnauthorized(() => setNeedKey(true)), []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  useEffect(() => {
    if (selected !== null) sessionStorage.setItem(SELECTED, selected);
  }, [selected]);

  const info = collections?.find((c) => c.name === selected);
  const needsCollection = page === 'points' || page === 'search' || page === 'projection';
  return (
    <div class="app">
      <header>
        <h1>kith</h1>
        <nav>
          {PAGES.map((p) => (
            <a key={p.id} href={`#/${p.id}`} class={p.id === page ? 'current' : ''} data-testid={`nav-${p.id}`}>
              {p.title}
            </a>
          ))}
        </nav>
        <div class="header-tools">
          {collections !== null && collections.length > 0 ? (
            <select data-testid="collection-select" aria-label="collection" value={selected ?? ''} onChange={(e) => setSelected(e.currentTarget.value)}>
              {collections.map((c) => (
                <option key={c.name} value={c.name}>
                  {c.name}
                </option>
              ))}
            </select>
          ) : null}
          <button type="button" onClick={() => void refresh()} data-testid="refresh">
            refresh
          </button>
          {hasKey ? (
            <button
              type="button"
              onClick={() => {
                forgetKey();
                setHasKey(false);
                void refresh();
              }}
            >
              forget key
            </button>
          ) : null}
        </div>
      </header>
      <main>
        {needKey ? (
          <KeyPrompt
            wrong={hasKey}
            onKey={(key) => {
              saveKey(key);
              setHasKey(true);
              void refresh();
            }}
          />
        ) : null}
        {error !== null ? <p class="error">{error}</p> : null}
        {needKey || collections === null ? null : page === 'collections' ? (
          <CollectionsPanel collections={collections} selected={selected} onSelect={setSelected} />
        ) : page === 'metrics' ? (
          <MetricsPanel />
        ) : needsCollection && info === undefined ? (
          <p class="muted">No collection to show: create one first.</p>
        ) : info !== undefined && page === 'points' ? (
          <PointsPanel key={info.name} info={info} />
        ) : info !== undefined && page === 'search' ? (
          <SearchPanel key={info.name} info={info} />
        ) : info !== undefined && page === 'projection' ? (
          <ProjectionPanel key={info.name} info={info} />
        ) : null}
      </main>
    </div>
  );
}
