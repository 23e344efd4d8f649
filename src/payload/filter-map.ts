/**
 * A walk that rewrites a parsed filter's conditions, for the engine's bindings of a filter to the
 * segment it runs on (text indexes: text-index.ts; vector holders: search/filter-bind.ts).
 */
import type { Condition, Filter } from './filter-types.js';

/**
 * The filter with `map` applied to every condition at every level (inside nested filters and
 * `elements` filters too, after their own conditions); the same objects where nothing changed.
 * `map` gets the key prefix Qdrant names a field by inside `nested` (kith's `elements`):
 * `outer[].` for the conditions on an element of the arrays at `outer`, `''` at the top.
 */
export function mapFilterConditions(filter: Filter, map: (condition: Condition, prefix: string) => Condition, prefix = ''): Filter {
  let changed = false;
  const mapList = (list: readonly Condition[]): readonly Condition[] => {
    const out = list.map((c) => map(mapInner(c, map, prefix), prefix));
    if (!out.some((c, i) => c !== list[i])) return list;
    changed = true;
    return out;
  };
  const must = mapList(filter.must);
  const mustNot = mapList(filter.mustNot);
  const should = mapList(filter.should);
  const minConditions = filter.minShould === undefined ? undefined : mapList(filter.minShould.conditions);
  if (!changed) return filter;
  const out: Filter = { must, mustNot, should };
  return filter.minShould === undefined ? out : { ...out, minShould: { conditions: minConditions as Condition[], minCount: filter.minShould.minCount } };
}

function mapInner(condition: Condition, map: (condition: Condition, prefix: string) => Condition, prefix: string): Condition {
  if (condition.kind !== 'nested' && condition.kind !== 'elements') return condition;
  const inner = condition.kind === 'elements' ? `${prefix}${condition.key}[].` : prefix;
  const filter = mapFilterConditions(condition.filter, map, inner);
  return filter === condition.filter ? condition : { ...condition, filter };
}
