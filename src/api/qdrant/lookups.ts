/**
 * Qdrant's `lookup_from`: the point ids of a query (a nearest point, a recommendation's examples,
 * a discovery's target and context pairs) name points of another collection, whose stored vectors
 * under one name (`lookup_from.vector`, else the name the search uses: Qdrant's
 * `get_lookup_vector_name`) stand in for them. They are read here, before the search, and the
 * query becomes one by vectors: the ids are not left out of the answer, since they are another
 * collection's points. The other collection must exist (404), hold the name as the same kind of
 * vector as the one searched, of the same size (400), and hold every id (404, as a missing example
 * is). A point there that lacks the vector is dropped from a recommendation's side (as a point of
 * this collection would be) and is a 404 as a target, a context pair's example or a nearest query.
 */
import { childPath } from '../../core/field-path.js';
import type { PointId } from '../../core/point-id.js';
import { NO_PAYLOAD } from '../../payload/payload-selector.js';
import type { PointRecord } from '../../collection/collection.js';
import type { ContextPairInput, Example, ExamplesInput, QueryRequest } from '../../search/query-verbs.js';
import { collectionOf } from './collections.js';
import { formatError, QdrantHttpError } from './errors.js';
import { toKithId } from './ids.js';
import { engineQuery, type Lookup, type PendingLookup, type Plan, type PlanTarget, type Query } from './query-parse.js';
import type { Stage } from '../../search/multi-stage.js';
import type { SearchInput } from '../../search/collection-search.js';
import type { QdrantRead, QdrantStore } from './store.js';
import { layoutOf, unknownVectorName, type VectorLayout } from './vector-layout.js';

/**
 * The plans, each search whose query names another collection's points turned into a search by
 * their vectors: a plan's own query, and the search stages of a stage tree (a prefetch's or the
 * query over them) that wait for one.
 */
export async function withLookups(plans: readonly Plan[], paths: readonly string[], store: QdrantStore, read: QdrantRead, target: PlanTarget): Promise<Plan[]> {
  const out: Plan[] = [];
  for (const [i, plan] of plans.entries()) {
    if (plan.kind === 'search' && hasLookup(plan.query))
      out.push({ ...plan, query: await lookedUp(plan.query, childPath(paths[i] ?? '', 'lookup_from'), store, read, target) });
    else if (plan.kind === 'stages' && plan.lookups !== undefined)
      out.push({ ...plan, stage: await stagesLookedUp(plan.stage, plan.lookups, paths[i] ?? '', store, read, target) });
    else out.push(plan);
  }
  return out;
}

/** The stage tree with each waiting search stage's engine query made from its query by vectors. */
async function stagesLookedUp(
  stage: Stage,
  pending: ReadonlyMap<Stage, PendingLookup>,
  planPath: string,
  store: QdrantStore,
  read: QdrantRead,
  target: PlanTarget,
): Promise<Stage> {
  const queries = new Map<Stage, QueryRequest<SearchInput>>();
  for (const [waiting, { query, common, mmr, path }] of pending) {
    const at = childPath(path === '' ? planPath : path, 'lookup_from');
    const resolved = await lookedUp(query as LookupQuery, at, store, read, target);
    queries.set(waiting, engineQuery({ kind: 'search', ...common, query: resolved, ...(mmr === undefined ? {} : { mmr }) }));
  }
  const rebuilt = (s: Stage): Stage => {
    if (s.kind === 'list') return s;
    const sources = s.sources.map(rebuilt);
    return s.kind === 'search' ? { ...s, query: queries.get(s) ?? s.query, sources } : { ...s, sources };
  };
  return rebuilt(stage);
}

type LookupQuery = Extract<Query, { kind: 'point' | 'recommend' | 'examples' }> & { lookup: Lookup };

function hasLookup(query: Query): query is LookupQuery {
  return (query.kind === 'point' || query.kind === 'recommend' || query.kind === 'examples') && query.lookup !== undefined;
}

/** A vector as a search by examples needs one: a dense row of `size`, a multi-vector's rows of `size`, or a sparse vector. */
type VectorKind = { readonly kind: 'dense' | 'multi'; readonly size: number } | { readonly kind: 'sparse' };

function describeKind(kind: VectorKind): string {
  return kind.kind === 'sparse' ? 'a sparse vector' : `${kind.kind === 'multi' ? 'a multi-vector' : 'a vector'} of ${kind.size} dimensions`;
}

/** What `name` is in a collection of this layout (`dim`: its main dense vector's size); undefined when it has no such vector. */
function kindIn(layout: VectorLayout, dim: number, name: string): VectorKind | undefined {
  if (name === layout.dense && !layout.denseHidden) return { kind: 'dense', size: dim };
  if (layout.sparse.has(name)) return { kind: 'sparse' };
  const spec = layout.named.get(name);
  if (spec === undefined) return undefined;
  return { kind: spec.multivector === true ? 'multi' : 'dense', size: spec.size };
}

async function lookedUp(query: LookupQuery, path: string, store: QdrantStore, read: QdrantRead, target: PlanTarget): Promise<Query> {
  const { lookup, using } = query;
  const searched = kindIn(target.layout, target.dim, using ?? target.layout.dense) as VectorKind;
  const other = await collectionOf(store, lookup.collection, read);
  const facts = await other.facts();
  const layout = layoutOf(facts);
  const name = lookup.vector ?? using ?? target.layout.dense;
  const theirs = kindIn(layout, facts.vector_size, name);
  if (theirs === undefined) throw unknownVectorName(name);
  if (theirs.kind !== searched.kind || (theirs.kind !== 'sparse' && searched.kind !== 'sparse' && theirs.size !== searched.size)) {
    const what =
      theirs.kind === 'dense' && searched.kind === 'dense'
        ? `have ${theirs.size} dimensions; this collection's have ${searched.size}`
        : `are ${describeKind(theirs)}; this search's are ${describeKind(searched)}`;
    throw formatError(path, `the vectors "${name}" of collection "${lookup.collection}" ${what}`);
  }
  const ids = new Map<PointId, number | string>();
  for (const raw of idsOf(query)) ids.set(toKithId(raw, path), raw);
  const records = new Map<PointId, PointRecord>();
  for (const record of await other.retrieve([...ids.keys()], { with_payload: NO_PAYLOAD, with_vector: true })) records.set(record.id, record);
  /** The vector an id stands for; undefined when the point lacks it (`required`: Qdrant's 404 then). */
  const vectorOf = (raw: number | string, required: boolean): Example | undefined => {
    const record = records.get(toKithId(raw, path));
    if (record === undefined) throw new QdrantHttpError(404, `Not found: No point with id ${JSON.stringify(raw)} found`);
    const vector = name === layout.dense ? record.vector : theirs.kind === 'sparse' ? record.sparse_vectors?.[name] : record.named_vectors?.[name];
    if (vector === undefined && required)
      throw new QdrantHttpError(404, `Not found: Vector with name ${JSON.stringify(name)} for point ${JSON.stringify(raw)}`);
    return vector as Example | undefined;
  };
  const one = (e: Example): Example => (isId(e) ? (vectorOf(e, true) as Example) : e);
  const side = (list: readonly Example[] | null | undefined): Example[] =>
    (list ?? []).map((e) => (isId(e) ? vectorOf(e, false) : e)).filter((e): e is Example => e !== undefined);
  const usingName = using === undefined ? {} : { using };
  switch (query.kind) {
    case 'point': {
      const vector = one(query.point);
      if (using === undefined) return { kind: 'vector', vector };
      return searched.kind === 'sparse'
        ? { kind: 'sparse', name: using, vector: vector as { indices: unknown; values: unknown } }
        : { kind: 'named', name: using, vector };
    }
    case 'recommend':
      return { kind: 'recommend', positive: side(query.positive), negative: side(query.negative), ...usingName };
    case 'examples':
      return { kind: 'examples', examples: examplesWith(query.examples, one, side), ...usingName };
  }
}

function isId(e: unknown): e is number | string {
  return typeof e === 'number' || typeof e === 'string';
}

/** Every id a query names. */
function idsOf(query: LookupQuery): (number | string)[] {
  if (query.kind === 'point') return [query.point];
  if (query.kind === 'recommend') return [...query.positive, ...query.negative].filter(isId);
  const examples = query.examples;
  if ('strategy' in examples) return [...(examples.positive ?? []), ...(examples.negative ?? [])].filter(isId);
  const pairs = (examples.context ?? []).flatMap((pair) => [pair.positive, pair.negative]);
  return ('target' in examples ? [examples.target, ...pairs] : pairs).filter(isId);
}

/** The examples with their ids replaced: a side's by `side` (those lacking the vector dropped), a target's and a pair's by `one`. */
function examplesWith(examples: ExamplesInput, one: (e: Example) => Example, side: (list: readonly Example[] | null | undefined) => Example[]): ExamplesInput {
  if ('strategy' in examples) return { strategy: examples.strategy, positive: side(examples.positive), negative: side(examples.negative) };
  const context = (examples.context ?? []).map((pair: ContextPairInput) => ({ positive: one(pair.positive), negative: one(pair.negative) }));
  return 'target' in examples ? { target: one(examples.target), context } : { context };
}
