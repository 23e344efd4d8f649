/**
 * A search whose scoring runs on a search thread (threads/search-threads.ts): the steps of
 * collection-search.ts are driven here, each piece of work sent to a thread as data (a query,
 * maybe a bitset, a slot list, or a filter the thread runs on the shared payload records). Work
 * whose filter needs the payloads runs here while they are not shared yet (`payloads`). Threads
 * keep score ties (they have no ids); the hits are re-ranked here by (score, id), so the answer
 * equals `searchSegment`'s.
 */
import { TopK } from '../core/top-k.js';
import type { SearchHits, SearchStats } from '../index/vector-index.js';
import { portableFilter } from '../payload/thread-filter.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import { type SearchInput, type SearchOutcome, type SearchWork, scoreHere, searchSteps } from '../search/collection-search.js';
import type { CalibratedEfReader } from '../search/search-ef.js';
import type { ThreadWork } from '../threads/search-thread-protocol.js';
import type { SegmentReader } from '../segment/segment.js';

export type Dispatch = (work: ThreadWork) => Promise<{ hits: SearchHits; scored: number }>;

/**
 * Whether threads can read the payloads now; `want` asks for them to be shared and resolves once
 * they are (true) or will not be (false). Work that needs them runs here meanwhile, unless
 * `waitForShare` (a search too long for the service thread): it waits for the copy.
 */
export interface PayloadAccess {
  readonly shared: boolean;
  want(): Promise<boolean>;
  readonly waitForShare?: boolean;
}

const SHARED: PayloadAccess = { shared: true, want: () => Promise.resolve(true) };

export async function searchSegmentParallel(
  memory: SegmentReader,
  config: CollectionConfig,
  calibratedEf: CalibratedEfReader,
  input: SearchInput,
  dispatch: Dispatch,
  payloads: PayloadAccess,
  /** Called once the search is planned and its first work is sent (or done here). */
  planned?: () => void,
): Promise<SearchOutcome> {
  const stats: SearchStats = { scored: 0 };
  const steps = searchSteps(memory, config, calibratedEf, input, stats);
  let step = steps.next();
  while (step.done !== true) {
    const work = step.value;
    let portable = threadWork(work, payloads);
    if (portable === undefined && payloads.waitForShare === true && (await payloads.want())) portable = threadWork(work, SHARED);
    let hits: SearchHits;
    if (portable === undefined) {
      hits = scoreHere(memory, work, stats);
      planned?.();
    } else {
      const sent = dispatch(portable);
      planned?.();
      const done = await sent;
      stats.scored += done.scored;
      // MMR's order is its answer; every other piece comes back by score, with ties to break by id.
      hits = work.kind === 'mmr' ? done.hits : rerank(done.hits, work.k, (slot) => memory.table.idOf(slot));
    }
    step = steps.next(hits);
  }
  return step.value;
}

/** The work as data a thread can take, or undefined when it needs payloads threads cannot read yet. */
export function threadWork(work: SearchWork, payloads: PayloadAccess): ThreadWork | undefined {
  if (work.kind === 'mmr') return { kind: 'mmr', slots: work.candidates.slots, sims: work.candidates.sims, picks: work.picks, diversity: work.diversity };
  const byFilter = work.accept !== undefined && (work.kind === 'slots' || work.acceptBits === undefined);
  if (byFilter && work.filter === undefined) return undefined;
  if (byFilter && !payloads.shared) {
    void payloads.want();
    return undefined;
  }
  const filter = byFilter && work.filter !== undefined ? portableFilter(work.filter) : undefined;
  switch (work.kind) {
    case 'slots':
      return { kind: 'slots', query: work.query, k: work.k, slots: work.slots, filter };
    case 'graph':
      return { kind: 'graph', query: work.query, k: work.k, ef: work.ef, acceptBits: work.acceptBits, filter, twoHop: work.twoHop };
    case 'flat':
      return { kind: 'flat', query: work.query, k: work.k, acceptBits: work.acceptBits, filter };
  }
}

/** The best `k` of a thread's hits by (similarity, id), as a TopK with ids over everything picks. */
function rerank(hits: SearchHits, k: number, idOf: (slot: number) => string): SearchHits {
  const top = new TopK(k, idOf);
  for (let i = 0; i < hits.slots.length; i++) top.offer(hits.slots[i] as number, hits.sims[i] as number);
  return top.drainSorted();
}
