/**
 * A parsed filter bound to the segment it runs on, as every search, scan and write by filter
 * binds it before estimating or compiling it: text conditions get their fields' indexes
 * (payload/text-index.ts), and `has_vector` the points holding the vector. The main vector's
 * name becomes a condition every point passes and a name the collection lacks one none passes,
 * so neither keeps a filter off the search threads; a named or sparse vector's holders stay a
 * condition, which a search thread answers from their bitset (payload/thread-filter.ts).
 */
import type { Condition, Filter } from '../payload/filter-types.js';
import { mapFilterConditions } from '../payload/filter-map.js';
import { bindTextIndexes } from '../payload/text-index.js';
import type { SegmentReader } from '../segment/segment.js';

const EVERY_POINT: Condition = { kind: 'nested', filter: { must: [], mustNot: [], should: [] } };
const NO_POINT: Condition = { kind: 'has_id', ids: new Set() };

export function bindFilter(filter: Filter, memory: SegmentReader): Filter {
  const bound = bindTextIndexes(filter, memory.payloadIndex.textIndexes);
  return mapFilterConditions(bound, (condition) => {
    if (condition.kind !== 'has_vector') return condition;
    const holders = memory.vectorHolders(condition.name);
    if (holders === 'all') return EVERY_POINT;
    if (holders === 'none') return NO_POINT;
    return { kind: 'has_vector', name: condition.name, holders };
  });
}
