/**
 * A recall-vs-QPS chart as a standalone SVG, written by hand (no plotting dependency): recall on a
 * linear x axis, QPS on a log y axis (up and to the right is better), one polyline with markers
 * per engine in ef order, dashed guides at the target recalls, a legend, and a tooltip per point.
 */
import type { CurvePoint } from './recall-curve.js';

export interface PlotSeries {
  readonly name: string;
  /** An exact engine is one point, drawn without a line. */
  readonly exact: boolean;
  /** In sweep (ef) order. */
  readonly points: readonly CurvePoint[];
}

export interface RecallQpsPlot {
  readonly title: string;
  /** Small lines under the title (parameters, machine). */
  readonly subtitle: readonly string[];
  readonly series: readonly PlotSeries[];
  /** Vertical dashed guides, e.g. 0.9, 0.95, 0.99. */
  readonly targets: readonly number[];
  readonly xLabel: string;
  readonly yLabel: string;
}

const WIDTH = 780;
const HEIGHT = 500;
const MARGIN = { left: 78, right: 200, top: 82, bottom: 62 } as const;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'] as const;
const MARKERS = ['circle', 'square', 'triangle', 'diamond'] as const;
const FONT = 'system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif';

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/\.?0+$/, '');
}

function compact(x: number): string {
  if (x >= 1e6) return `${fmt(x / 1e6)}M`;
  if (x >= 1e3) return `${fmt(x / 1e3)}k`;
  return fmt(x);
}

function marker(shape: (typeof MARKERS)[number], x: number, y: number, color: string, tooltip: string): string {
  const r = 4;
  const style = `fill="${color}" stroke="#ffffff" stroke-width="1"`;
  const title = `<title>${esc(tooltip)}</title>`;
  switch (shape) {
    case 'circle':
      return `<circle cx="${fmt(x)}" cy="${fmt(y)}" r="${r}" ${style}>${title}</circle>`;
    case 'square':
      return `<rect x="${fmt(x - r)}" y="${fmt(y - r)}" width="${2 * r}" height="${2 * r}" ${style}>${title}</rect>`;
    case 'triangle':
      return `<polygon points="${fmt(x)},${fmt(y - r - 1)} ${fmt(x - r - 1)},${fmt(y + r)} ${fmt(x + r + 1)},${fmt(y + r)}" ${style}>${title}</polygon>`;
    case 'diamond':
      return `<polygon points="${fmt(x)},${fmt(y - r - 1)} ${fmt(x + r + 1)},${fmt(y)} ${fmt(x)},${fmt(y + r + 1)} ${fmt(x - r - 1)},${fmt(y)}" ${style}>${title}</polygon>`;
  }
}

export function renderRecallQpsSvg(plot: RecallQpsPlot): string {
  const all = plot.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.recall) && p.qps > 0);
  const x0 = MARGIN.left;
  const x1 = WIDTH - MARGIN.right;
  const y0 = MARGIN.top;
  const y1 = HEIGHT - MARGIN.bottom;

  // x: recall, from a round value below the lowest point (and below the lowest target) to 1.
  const lowest = Math.min(1, ...all.map((p) => p.recall), ...plot.targets.map((t) => t - 0.02));
  const xMin = Math.max(0, Math.floor(lowest * 20) / 20);
  const range = 1 - xMin;
  const xMax = 1 + range * 0.02;
  const xStep = range > 0.4 ? 0.1 : range > 0.15 ? 0.05 : 0.025;
  const sx = (r: number): number => x0 + ((r - xMin) / (xMax - xMin)) * (x1 - x0);

  // y: log10 QPS, whole decades.
  const qpsValues = all.map((p) => p.qps);
  let dMin = Math.floor(Math.log10(Math.min(...qpsValues, 1e9)));
  let dMax = Math.ceil(Math.log10(Math.max(...qpsValues, 1)));
  if (all.length === 0) {
    dMin = 1;
    dMax = 4;
  }
  if (dMax <= dMin) dMax = dMin + 1;
  const sy = (q: number): number => y1 - ((Math.log10(q) - dMin) / (dMax - dMin)) * (y1 - y0);

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="${FONT}" font-size="12">`,
  );
  out.push(`<title>${esc(plot.title)}</title>`);
  out.push(`<rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`);
  out.push(`<text x="${x0}" y="24" font-size="15" font-weight="600" fill="#111111">${esc(plot.title)}</text>`);
  plot.subtitle.forEach((line, i) => {
    out.push(`<text x="${x0}" y="${42 + 14 * i}" font-size="11" fill="#555555">${esc(line)}</text>`);
  });

  // Grid and y ticks: a line per decade, lighter ones at 2× and 5×.
  for (let d = dMin; d <= dMax; d++) {
    for (const m of [1, 2, 5]) {
      const q = m * 10 ** d;
      if (d === dMax && m > 1) continue;
      const y = sy(q);
      out.push(`<line x1="${x0}" y1="${fmt(y)}" x2="${x1}" y2="${fmt(y)}" stroke="${m === 1 ? '#d0d0d0' : '#eeeeee'}" stroke-width="1"/>`);
      out.push(`<text x="${x0 - 8}" y="${fmt(y + 4)}" text-anchor="end" fill="${m === 1 ? '#333333' : '#888888'}">${compact(q)}</text>`);
    }
  }
  // x ticks.
  for (let i = 0; ; i++) {
    const r = Math.round((xMin + i * xStep) * 1000) / 1000;
    if (r > 1 + 1e-9) break;
    const x = sx(r);
    out.push(`<line x1="${fmt(x)}" y1="${y0}" x2="${fmt(x)}" y2="${y1}" stroke="#eeeeee" stroke-width="1"/>`);
    out.push(`<text x="${fmt(x)}" y="${y1 + 18}" text-anchor="middle" fill="#333333">${fmt(r)}</text>`);
  }
  // Target recalls.
  for (const t of plot.targets) {
    if (t < xMin || t > 1) continue;
    const x = sx(t);
    out.push(`<line x1="${fmt(x)}" y1="${y0}" x2="${fmt(x)}" y2="${y1}" stroke="#999999" stroke-width="1" stroke-dasharray="4 4"/>`);
    out.push(`<text x="${fmt(x)}" y="${y0 - 6}" text-anchor="middle" font-size="10" fill="#777777">${fmt(t)}</text>`);
  }
  // Frame and axis labels.
  out.push(`<rect x="${x0}" y="${y0}" width="${x1 - x0}" height="${y1 - y0}" fill="none" stroke="#444444" stroke-width="1"/>`);
  out.push(`<text x="${fmt((x0 + x1) / 2)}" y="${HEIGHT - 18}" text-anchor="middle" font-size="13" fill="#111111">${esc(plot.xLabel)}</text>`);
  out.push(`<text transform="translate(20 ${fmt((y0 + y1) / 2)}) rotate(-90)" text-anchor="middle" font-size="13" fill="#111111">${esc(plot.yLabel)}</text>`);

  // Series, clipped to the plot area.
  out.push(`<defs><clipPath id="plot-area"><rect x="${x0}" y="${y0 - 6}" width="${x1 - x0 + 6}" height="${y1 - y0 + 12}"/></clipPath></defs>`);
  out.push('<g clip-path="url(#plot-area)">');
  plot.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length] as string;
    const shape = MARKERS[i % MARKERS.length] as (typeof MARKERS)[number];
    const pts = series.points.filter((p) => Number.isFinite(p.recall) && p.qps > 0);
    if (!series.exact && pts.length > 1) {
      const path = pts.map((p) => `${fmt(sx(p.recall))},${fmt(sy(p.qps))}`).join(' ');
      out.push(`<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2" stroke-linejoin="round"/>`);
    }
    for (const p of pts) {
      const what = p.ef === null ? 'exact' : `ef ${p.ef}`;
      out.push(
        marker(
          shape,
          sx(p.recall),
          sy(p.qps),
          color,
          `${series.name}, ${what}: recall ${p.recall.toFixed(4)}, ${Math.round(p.qps).toLocaleString('en-US')} QPS`,
        ),
      );
    }
    // The ef of the first point (above right) and of the last (below left).
    const first = pts[0];
    const last = pts[pts.length - 1];
    if (pts.length > 1 && first !== undefined && last !== undefined && first.ef !== null && last.ef !== null) {
      out.push(`<text x="${fmt(sx(first.recall) + 6)}" y="${fmt(sy(first.qps) - 8)}" font-size="9" fill="${color}">ef ${first.ef}</text>`);
      out.push(`<text x="${fmt(sx(last.recall) - 6)}" y="${fmt(sy(last.qps) + 15)}" text-anchor="end" font-size="9" fill="${color}">ef ${last.ef}</text>`);
    }
  });
  out.push('</g>');

  // Legend.
  const lx = x1 + 18;
  let ly = y0 + 10;
  plot.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length] as string;
    const shape = MARKERS[i % MARKERS.length] as (typeof MARKERS)[number];
    if (!series.exact) out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    out.push(marker(shape, lx + 12, ly, color, series.name));
    out.push(`<text x="${lx + 32}" y="${ly + 4}" fill="#111111">${esc(series.name)}</text>`);
    ly += 22;
  });
  out.push(`<text x="${lx}" y="${ly + 8}" font-size="10" fill="#777777">line: ef sweep, low ef at left</text>`);
  if (plot.series.some((s) => s.exact)) out.push(`<text x="${lx}" y="${ly + 22}" font-size="10" fill="#777777">lone marker: exact search</text>`);
  out.push(`<text x="${lx}" y="${ly + (plot.series.some((s) => s.exact) ? 36 : 22)}" font-size="10" fill="#777777">dashed: target recalls</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
