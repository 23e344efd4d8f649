/**
 * The `filtered` benchmark's result types, its targets (from the issue), the printed tables and
 * the one-line summary.
 *
 * Targets, per filter shape, for kith's planner at the main ef:
 * - recall@k ≥ 0.95;
 * - QPS ≥ 0.5 × kith's unfiltered QPS at the same ef, in the same run;
 * - QPS ≥ 1 × unfiltered where the shape is designed to match 1% of the points or fewer.
 */
import type { Selectivity } from './filtered-truth.js';
import type { CellResult, ExplainSummary, FilteredFailure, FilteredRun } from './filtered-worker.js';
import { round } from './stats.js';
import { formatTable } from './table.js';

export const TARGET_RECALL = 0.95;
export const TARGET_RATIO = 0.5;
export const TARGET_RATIO_SELECTIVE = 1;
/** "Selectivities of 1% or less": judged on the shape's designed share (a 1% shape measures 0.98–1.02%). */
export const SELECTIVE_AT = 0.01;

export interface ShapeInfo {
  readonly name: string;
  readonly description: string;
  readonly nominal: number;
  readonly selectivity: Selectivity;
}

export interface DatasetResult {
  readonly dataset: {
    readonly name: string;
    readonly label: string;
    readonly description: string;
    readonly metric: string;
    readonly dim: number;
    readonly base: number;
    readonly queries: number;
    readonly payloads: string;
    readonly ground_truth: { readonly cached: boolean; readonly seconds: number; readonly file: string };
    readonly filtered_ground_truth: { readonly cached: boolean; readonly seconds: number; readonly file: string };
  };
  readonly shapes: readonly ShapeInfo[];
  readonly kith: FilteredRun | null;
  readonly hnswlib: FilteredRun | null;
  readonly failed: readonly FilteredFailure[];
  /** Engines not run, with why (a peer that is not installed). */
  readonly skipped: readonly string[];
}

export interface Targets {
  readonly recall: boolean;
  readonly half_unfiltered: boolean;
  /** null where the shape matches more than 1%. */
  readonly unfiltered_at_selective: boolean | null;
  readonly pass: boolean;
}

export function find(run: FilteredRun | null, ef: number, shape: string | null, mode: string): CellResult | undefined {
  return run?.cells.find((c) => c.ef === ef && c.shape === shape && c.mode === mode && c.again !== true);
}

export interface Baseline {
  /** The unfiltered cell measured before the shapes (recall, explain). */
  readonly cell: CellResult;
  /** Its QPS before and after the shapes, and their mean: what every ratio divides by. */
  readonly before: number;
  readonly after: number | null;
  readonly qps: number;
}

/** An engine's unfiltered search at `ef`, measured before and after the filtered cells. */
export function baseline(run: FilteredRun | null, ef: number, mode: string): Baseline | undefined {
  const cell = find(run, ef, null, mode);
  if (cell === undefined) return undefined;
  const after = run?.cells.find((c) => c.ef === ef && c.shape === null && c.mode === mode && c.again === true)?.qps_median ?? null;
  return { cell, before: cell.qps_median, after, qps: after === null ? cell.qps_median : (cell.qps_median + after) / 2 };
}

export function ratio(a: number | undefined, b: number | undefined, digits = 3): number | null {
  return a === undefined || b === undefined || b === 0 ? null : round(a / b, digits);
}

export function targets(shape: ShapeInfo, cell: CellResult, unfilteredQps: number): Targets {
  const r = cell.qps_median / unfilteredQps;
  const recall = cell.recall >= TARGET_RECALL;
  const half = r >= TARGET_RATIO;
  const selective = shape.nominal <= SELECTIVE_AT ? r >= TARGET_RATIO_SELECTIVE : null;
  return { recall, half_unfiltered: half, unfiltered_at_selective: selective, pass: recall && half && selective !== false };
}

/** The strategy that answered most queries. */
export function mainStrategy(e: ExplainSummary | null): string {
  if (e === null) return '—';
  return Object.entries(e.strategies).sort((a, b) => b[1] - a[1])[0]?.[0] ?? '—';
}

/** "candidates-exact", or "graph-filtered 712 / candidates-exact 288" when queries differed. */
function strategyCell(e: ExplainSummary | null): string {
  if (e === null) return '—';
  const entries = Object.entries(e.strategies).sort((a, b) => b[1] - a[1]);
  const shortened = entries.map(([s, c]) => `${s} ${c}`);
  const sampled = e.sampled > 0 ? ` (sampled ${e.sampled})` : '';
  return `${entries.length === 1 ? (entries[0]?.[0] ?? '—') : shortened.join(' / ')}${sampled}`;
}

const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const pct = (x: number): string => `${(x * 100).toFixed(x < 0.01 ? 3 : x < 0.1 ? 2 : 1)}%`;
const mark = (ok: boolean | null, text: string): string => (ok === null ? '—' : `${ok ? 'pass' : 'FAIL'} ${text}`);
const times = (x: number | null): string => (x === null ? '—' : `${x.toFixed(2)}×`);

function selectivityCell(s: Selectivity): string {
  return `${pct(s.mean)} (${pct(s.min)}–${pct(s.max)})`;
}

function recallCell(c: CellResult): string {
  return `${c.recall.toFixed(4)}${c.violations > 0 ? ` (${c.violations} not matching!)` : ''}`;
}

export interface PrintParams {
  readonly m: number;
  readonly efConstruction: number;
  readonly ef: number;
  readonly efs: readonly number[];
  readonly k: number;
  readonly runs: number;
  readonly cellSeconds: number;
}

function out(text: string): void {
  process.stdout.write(text);
}

export function printDataset(r: DatasetResult, p: PrintParams): void {
  const d = r.dataset;
  out(
    `\nfiltered — ${d.label}: ${d.base.toLocaleString('en-US')} × ${d.dim}, ${d.metric === 'l2' ? 'L2' : d.metric}, ${d.queries.toLocaleString('en-US')} queries ` +
      `(each with its own filter value); M=${p.m}, ef_construction=${p.efConstruction}, ef=${p.ef}; recall@${p.k} against exact filtered top-${p.k}; ` +
      `single-threaded sequential queries in-process; QPS = median of up to ${p.runs} passes (fewer past ${p.cellSeconds} s per cell)\n`,
  );
  out(`payloads: ${d.payloads}\n`);
  const kithBase = baseline(r.kith, p.ef, 'auto');
  const libBase = baseline(r.hnswlib, p.ef, 'callback');
  const baseText = (b: Baseline): string =>
    `recall ${b.cell.recall.toFixed(4)}, ${int(b.qps)} QPS (${int(b.before)} before the filtered cells, ${b.after === null ? '—' : int(b.after)} after; ratios use the mean)`;
  if (kithBase !== undefined) {
    out(`unfiltered at ef ${p.ef}: kith ${baseText(kithBase)}, ${int(kithBase.cell.explain?.scored_mean ?? 0)} distances/query\n`);
    if (libBase !== undefined) out(`unfiltered at ef ${p.ef}: hnswlib-node ${baseText(libBase)}\n`);
    out('\n');
    const rows = r.shapes.map((s) => {
      const c = find(r.kith, p.ef, s.name, 'auto');
      if (c === undefined) return [s.name, selectivityCell(s.selectivity), '—', '—', '—', '—', '—', '—', '—', '—', '—', '—'];
      const t = targets(s, c, kithBase.qps);
      const x = c.qps_median / kithBase.qps;
      return [
        s.name,
        selectivityCell(s.selectivity),
        strategyCell(c.explain),
        recallCell(c),
        int(c.qps_median),
        times(x),
        int(c.explain?.scored_mean ?? 0),
        String(c.explain?.fallbacks ?? 0),
        mark(t.recall, `≥ ${TARGET_RECALL}`),
        mark(t.half_unfiltered, `≥ ${TARGET_RATIO}×`),
        mark(t.unfiltered_at_selective, `≥ ${TARGET_RATIO_SELECTIVE}×`),
        t.pass ? 'pass' : 'FAIL',
      ];
    });
    out('kith, planner (targets from the issue; 1× applies at ≤ 1%):\n');
    out(
      `${formatTable(['shape', 'selectivity mean (min–max)', 'strategy (queries)', `recall@${p.k}`, 'QPS', '× unfiltered', 'distances/query', `fallbacks /${d.queries}`, 'recall', 'QPS vs unf.', '≤1%: QPS', 'all'], rows)}\n`,
    );
    printSampled(r, p);
    printForced(r, p, kithBase.qps);
  }
  printHnswlib(r, p, kithBase?.qps, libBase?.qps);
  if (p.efs.length > 0) printSweep(r, p);
  for (const f of r.failed) out(`${f.engine}: ${f.missing_peer ? 'skipped' : 'FAILED'}: ${f.error}\n`);
  for (const s of r.skipped) out(`${s}\n`);
  out('\n');
}

/** Where the planner sampled: what the indexes estimated and what the sample concluded. */
function printSampled(r: DatasetResult, p: PrintParams): void {
  for (const s of r.shapes) {
    const e = find(r.kith, p.ef, s.name, 'auto')?.explain;
    if (e === undefined || e === null || e.sampled === 0 || e.sample_share_mean === null) continue;
    const population = e.candidates_mean ?? r.dataset.base;
    out(
      `planner sampled ${s.name} in ${e.sampled} queries: the indexes estimated ${int(e.estimate_mean ?? 0)} matches and named ${e.candidates_mean === null ? 'no' : int(e.candidates_mean)} candidates; ` +
        `the sample found ${(e.sample_share_mean * 100).toFixed(1)}% of them matching, i.e. ~${int(e.sample_share_mean * population)} expected matches (measured: ${int(s.selectivity.mean_matches)})\n`,
    );
  }
  out('\n');
}

/** The planner's choice beside each strategy forced: which one pays at each selectivity. */
function printForced(r: DatasetResult, p: PrintParams, unfilteredQps: number): void {
  const modes = ['auto', 'candidates-exact', 'two-hop', 'plain'] as const;
  const rows: string[][] = [];
  for (const s of r.shapes) {
    const cells = modes.map((m) => find(r.kith, p.ef, s.name, m));
    if (cells.slice(1).every((c) => c === undefined)) continue;
    // The fastest forced strategy that keeps recall at the target: what the planner should pick.
    let best: CellResult | undefined;
    for (const c of cells.slice(1)) {
      if (c !== undefined && c.recall >= TARGET_RECALL && (best === undefined || c.qps_median > best.qps_median)) best = c;
    }
    cells.forEach((c, i) => {
      if (c === undefined) return;
      rows.push([
        i === 0 ? `${s.name} (${pct(s.selectivity.mean)})` : '',
        modes[i] === 'auto' ? 'planner' : `forced ${modes[i]}`,
        strategyCell(c.explain),
        recallCell(c),
        `${int(c.qps_median)}${c === best ? ' *' : ''}`,
        times(c.qps_median / unfilteredQps),
        int(c.explain?.scored_mean ?? 0),
        String(c.explain?.fallbacks ?? 0),
      ]);
    });
  }
  if (rows.length === 0) return;
  out(`kith, forced strategies (* = fastest forced one with recall ≥ ${TARGET_RECALL}):\n`);
  out(
    `${formatTable(['shape', 'mode', 'strategy that ran', `recall@${p.k}`, 'QPS', '× unfiltered', 'distances/query', `fallbacks /${r.dataset.queries}`], rows)}\n\n`,
  );
}

function printHnswlib(r: DatasetResult, p: PrintParams, kithUnfiltered: number | undefined, libUnfiltered: number | undefined): void {
  if (r.hnswlib === null || libUnfiltered === undefined) return;
  const rows = r.shapes.map((s) => {
    const c = find(r.hnswlib, p.ef, s.name, 'callback');
    const kith = find(r.kith, p.ef, s.name, 'auto');
    if (c === undefined) return [s.name, '—', '—', '—', '—', '—'];
    return [
      `${s.name} (${pct(s.selectivity.mean)})`,
      recallCell(c),
      int(c.qps_median),
      times(c.qps_median / libUnfiltered),
      String(c.short_answers),
      times(ratio(kith?.qps_median, c.qps_median)),
    ];
  });
  const kithVs = ratio(kithUnfiltered, libUnfiltered);
  out(`hnswlib-node, filter callback (label) => boolean at ef ${p.ef} (unfiltered kith/hnswlib QPS ${times(kithVs)}):\n`);
  out(`${formatTable(['shape', `recall@${p.k}`, 'QPS', '× its unfiltered', 'short answers', 'kith QPS / hnswlib QPS'], rows)}\n\n`);
}

function printSweep(r: DatasetResult, p: PrintParams): void {
  const efs = [...new Set([p.ef, ...p.efs])].sort((a, b) => a - b);
  const rows: string[][] = [];
  for (const shape of [null, ...r.shapes.map((s) => s.name)]) {
    for (const ef of efs) {
      const c = find(r.kith, ef, shape, 'auto');
      const base = baseline(r.kith, ef, 'auto');
      const lib = find(r.hnswlib, ef, shape, 'callback');
      if (c === undefined && lib === undefined) continue;
      rows.push([
        ef === efs[0] ? (shape ?? 'unfiltered') : '',
        String(ef),
        c === undefined ? '—' : strategyCell(c.explain),
        c === undefined ? '—' : recallCell(c),
        c === undefined ? '—' : int(c.qps_median),
        c === undefined || base === undefined ? '—' : times(c.qps_median / base.qps),
        lib === undefined ? '—' : recallCell(lib),
        lib === undefined ? '—' : int(lib.qps_median),
      ]);
    }
  }
  out('ef sweep (kith planner; hnswlib-node callback):\n');
  out(`${formatTable(['shape', 'ef', 'kith strategy', 'kith recall', 'kith QPS', '× unfiltered', 'hnswlib recall', 'hnswlib QPS'], rows)}\n\n`);
}

/** Per shape, what the final JSON line carries. */
export function summarizeDataset(r: DatasetResult, ef: number): Record<string, unknown> {
  const kithBase = baseline(r.kith, ef, 'auto');
  const libBase = baseline(r.hnswlib, ef, 'callback');
  const shapes: Record<string, unknown> = {};
  for (const s of r.shapes) {
    const c = find(r.kith, ef, s.name, 'auto');
    const lib = find(r.hnswlib, ef, s.name, 'callback');
    const forced: Record<string, unknown> = {};
    for (const mode of ['candidates-exact', 'two-hop', 'plain']) {
      const f = find(r.kith, ef, s.name, mode);
      if (f !== undefined)
        forced[mode] = { recall: f.recall, qps_ratio_vs_unfiltered: ratio(f.qps_median, kithBase?.qps), fallbacks: f.explain?.fallbacks ?? 0 };
    }
    const t = c === undefined || kithBase === undefined ? null : targets(s, c, kithBase.qps);
    shapes[s.name] = {
      selectivity: round(s.selectivity.mean, 5),
      recall: c?.recall ?? null,
      qps: c === undefined ? null : Math.round(c.qps_median),
      qps_ratio_vs_unfiltered: ratio(c?.qps_median, kithBase?.qps),
      strategy: c === undefined ? null : mainStrategy(c.explain),
      strategies: c?.explain?.strategies ?? null,
      distances_per_query: c?.explain?.scored_mean ?? null,
      fallbacks: c?.explain?.fallbacks ?? null,
      targets: t === null ? null : { recall_0_95: t.recall, qps_0_5x: t.half_unfiltered, qps_1x_at_1pct: t.unfiltered_at_selective },
      pass: t?.pass ?? null,
      forced,
      hnswlib: lib === undefined ? null : { recall: lib.recall, qps: Math.round(lib.qps_median), qps_ratio_vs_unfiltered: ratio(lib.qps_median, libBase?.qps) },
    };
  }
  return {
    unfiltered: {
      kith: kithBase === undefined ? null : { recall: kithBase.cell.recall, qps: Math.round(kithBase.qps), before_after: [kithBase.before, kithBase.after] },
      hnswlib: libBase === undefined ? null : { recall: libBase.cell.recall, qps: Math.round(libBase.qps), before_after: [libBase.before, libBase.after] },
    },
    shapes,
  };
}
