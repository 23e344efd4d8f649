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
import { filterReads, portableFilter } from '../payload/thread-filter.js';
import type { CollectionConfig } from '../segment/collection-config.js';
import { type LocalPredicate, type LocalWork, type SearchInput, type SearchOutcome, scoreHere, searchSteps } from '../search/collection-search.js';
import type { SlotFilter } from '../segment/search-work.js';
import type { PortableFilter } from '../payload/thread-filter.js';
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
      hits = scoreHere(memory, config, work, stats);
      planned?.();
    } else {
      const sent = dispatch(portable);
      planned?.();
      const done = await sent;
      stats.scored += done.scored;
      // MMR's order is its answer (and a sum is no ranking); every other piece comes back by score, with ties to break by id.
      hits = work.kind === 'mmr' || work.kind === 'sum' ? done.hits : rerank(done.hits, work.k, (slot) => memory.table.idOf(slot));
    }
    step = steps.next(hits);
  }
  return step.value;
}

/** The work as data a thread can take, or undefined when it needs payloads threads cannot read yet. */
export function threadWork(work: LocalWork, payloads: PayloadAccess): ThreadWork | undefined {
  if (work.kind === 'mmr' || work.kind === 'sum') return work;
  const only = portableOnly(work.only, payloads);
  if (only === undefined) return undefined;
  return { ...work, only };
}

/** A slot filter as a thread takes it: a predicate as its filter in portable form, once the payloads it reads are shared. */
function portableOnly(only: SlotFilter<LocalPredicate>, payloads: PayloadAccess): SlotFilter<PortableFilter> | undefined {
  if (only.kind !== 'predicate') return only;
  // Threads hold no named or sparse vectors: a bound has_vector goes as its holders' bitset
  // (payload/thread-filter.ts). Run here, an exact search under the widest filter mixed with one
  // held the service 150 ms per 10,000 points, and a batch of them 304 ms in the route walk.
  if (filterReads(only.predicate.filter).vectors) return undefined;
  if (!payloads.shared) {
    void payloads.want();
    return undefined;
  }
  return { kind: 'predicate', predicate: portableFilter(only.predicate.filter) };
}

/** The best `k` of a thread's hits by (similarity, id), as a TopK with ids over everything picks. */
function rerank(hits: SearchHits, k: number, idOf: (slot: number) => string): SearchHits {
  const top = new TopK(k, idOf);
  for (let i = 0; i < hits.slots.length; i++) top.offer(hits.slots[i] as number, hits.sims[i] as number);
  return top.drainSorted();
}
