/** The dashboard's pages, addressed by the URL's hash (#/search), so a page can be linked and reloaded. */
import { useEffect, useState } from 'preact/hooks';

export const PAGES = [
  { id: 'collections', title: 'Collections' },
  { id: 'points', title: 'Points' },
  { id: 'search', title: 'Search' },
  { id: 'projection', title: 'Projection' },
  { id: 'metrics', title: 'Metrics' },
] as const;

export type PageId = (typeof PAGES)[number]['id'];

function fromHash(): PageId {
  const id = location.hash.replace(/^#\/?/, '');
  return PAGES.find((p) => p.id === id)?.id ?? 'collections';
}

export function usePage(): PageId {
  const [page, setPage] = useState<PageId>(fromHash);
  useEffect(() => {
    const onChange = (): void => setPage(fromHash());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return page;
}
