/** Collections: every collection with its size and configuration; a row selects it for the other panels. */
import type { Calibration, CollectionInfo } from '../types';

interface Props {
  readonly collections: readonly CollectionInfo[];
  readonly selected: string | null;
  readonly onSelect: (name: string) => void;
}

/** The default ef of an HNSW collection and how it was chosen. */
function calibrationRows(calibration: Calibration | undefined): [string, string][] {
  if (calibration === undefined || calibration.state === 'flat') return [];
  const rows: [string, string][] = [
    ['default ef', `${calibration.ef} (${calibration.state}${calibration.running ? ', calibrating now' : ''})`],
    ['target recall', String(calibration.target_recall)],
  ];
  if (calibration.recall !== null) {
    const bound = calibration.recall_lower_bound === null ? '' : ` (≥ ${calibration.recall_lower_bound.toFixed(3)} at 95%)`;
    rows.push(['measured recall', `${calibration.recall.toFixed(3)}${bound}`]);
  }
  return rows;
}

/** The vectors beside the main one: its name, the named dense vectors (exact), the sparse ones. */
function vectorRows(info: CollectionInfo): [string, string][] {
  const rows: [string, string][] = [];
  if (info.vector_name !== undefined) rows.push(['main vector name', info.vector_name]);
  for (const [name, spec] of Object.entries(info.named_vectors ?? {})) {
    rows.push([`named vector ${name}`, `${spec.size}-d ${spec.distance}${spec.multivector ? ', multi-vector (max_sim)' : ''}, exact`]);
  }
  for (const [name, spec] of Object.entries(info.sparse_vectors ?? {})) rows.push([`sparse vector ${name}`, spec.modifier === 'idf' ? 'idf' : 'no modifier']);
  return rows;
}

function Details({ info }: { info: CollectionInfo }) {
  const rows: [string, string][] = [
    ['points', info.points_count.toLocaleString('en')],
    ['vector size', String(info.vector_size)],
    ['distance', info.distance],
    ['index', info.hnsw ? 'HNSW' : 'flat (exact)'],
    ['m', String(info.parameters.m)],
    ['ef_construction', String(info.parameters.ef_construction)],
    ['ef_search', String(info.parameters.ef_search)],
    ['k (default limit)', String(info.parameters.k)],
    ['quantization', info.quantization],
    ['payload indexes', info.payload_index ? 'on' : 'off'],
    ...vectorRows(info),
    ...calibrationRows(info.calibration),
  ];
  return (
    <section class="card" data-testid="collection-details">
      <h3>{info.name}</h3>
      <dl class="details">
        {rows.map(([term, value]) => (
          <div key={term}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

export function CollectionsPanel({ collections, selected, onSelect }: Props) {
  if (collections.length === 0) {
    return <p class="muted">No collections yet: create one with POST /collections or `kith import`.</p>;
  }
  const info = collections.find((c) => c.name === selected);
  return (
    <div class="panel">
      <table class="grid" data-testid="collections-table">
        <thead>
          <tr>
            <th>name</th>
            <th class="num">points</th>
            <th class="num">dim</th>
            <th>distance</th>
            <th>index</th>
            <th>quantization</th>
            <th>payload indexes</th>
          </tr>
        </thead>
        <tbody>
          {collections.map((c) => (
            <tr key={c.name} data-collection={c.name} class={c.name === selected ? 'selected' : ''} onClick={() => onSelect(c.name)}>
              <td>
                <button type="button" class="link">
                  {c.name}
                </button>
              </td>
              <td class="num">{c.points_count.toLocaleString('en')}</td>
              <td class="num">{c.vector_size}</td>
              <td>{c.distance}</td>
              <td>{c.hnsw ? 'HNSW' : 'flat'}</td>
              <td>{c.quantization}</td>
              <td>{c.payload_index ? 'on' : 'off'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {info !== undefined ? <Details info={info} /> : null}
    </div>
  );
}
