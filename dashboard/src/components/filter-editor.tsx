/**
 * The filter editor: JSON checked on every keystroke in the page (a parse error at once), then,
 * once typing pauses, by the server itself (a one-result search with explain), so a mistake shows
 * the server's 400 message with the field's path, and a valid filter its estimated matches
 * (lib/estimate-text.ts: a count, "about", or only a bracket when the indexes could not count it).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, search } from '../api';
import { useDebounced } from '../lib/debounce';
import { estimateText } from '../lib/estimate-text';
import { unitVector } from '../lib/unit-vector';
import type { Estimate } from '../types';

export const FILTER_DEBOUNCE_MS = 350;

type Status =
  | { kind: 'empty' }
  | { kind: 'json-error'; message: string }
  | { kind: 'checking' }
  | { kind: 'server-error'; message: string }
  | { kind: 'valid'; estimate: Estimate | null };

/** The filter of the editor's text: undefined when empty; throws SyntaxError when not JSON. */
export function parseFilterText(text: string): unknown {
  return text.trim() === '' ? undefined : JSON.parse(text);
}

function localStatus(text: string): Status | null {
  try {
    return parseFilterText(text) === undefined ? { kind: 'empty' } : null;
  } catch (error) {
    return { kind: 'json-error', message: error instanceof Error ? error.message : String(error) };
  }
}

interface Props {
  readonly collection: string;
  readonly vectorSize: number;
  readonly text: string;
  readonly onText: (text: string) => void;
}

export function FilterEditor({ collection, vectorSize, text, onText }: Props) {
  const local = localStatus(text);
  const settled = useDebounced(text, FILTER_DEBOUNCE_MS);
  const [server, setServer] = useState<{ text: string; status: Status } | null>(null);

  useEffect(() => {
    if (localStatus(settled) !== null) return undefined;
    let current = true;
    search(collection, { vector: unitVector(vectorSize), limit: 1, filter: parseFilterText(settled), with_payload: false, params: { explain: true } })
      .then((answer) => {
        if (current) setServer({ text: settled, status: { kind: 'valid', estimate: answer.explain?.estimate ?? null } });
      })
      .catch((error: unknown) => {
        const message = error instanceof ApiError ? `${error.status}: ${error.message}` : String(error);
        if (current) setServer({ text: settled, status: { kind: 'server-error', message } });
      });
    return () => {
      current = false;
    };
  }, [settled, collection, vectorSize]);

  const status: Status = local ?? (server !== null && server.text === text ? server.status : { kind: 'checking' });
  return (
    <div class="filter-editor">
      <label for="filter-text">Filter (JSON; empty for none)</label>
      <textarea
        id="filter-text"
        data-testid="filter-text"
        rows={6}
        spellcheck={false}
        class={status.kind === 'json-error' || status.kind === 'server-error' ? 'invalid' : ''}
        value={text}
        onInput={(e) => onText(e.currentTarget.value)}
        placeholder='{"must": [{"key": "colour", "type": "exact", "match": {"value": "red"}}]}'
      />
      <div class={`filter-status status-${status.kind}`} data-testid="filter-status" data-kind={status.kind}>
        {status.kind === 'empty' && 'no filter: every point matches'}
        {status.kind === 'json-error' && `not JSON: ${status.message}`}
        {status.kind === 'checking' && 'checking with the server…'}
        {status.kind === 'server-error' && `the server refuses it: ${status.message}`}
        {status.kind === 'valid' && `valid${status.estimate !== null ? `; ${estimateText(status.estimate)}` : ''}`}
      </div>
    </div>
  );
}
