/**
 * A uPlot time-series chart: created once per mount, its data replaced on every render, resized
 * with its container.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  readonly label: string;
  readonly colour: string;
}

interface Props {
  readonly title: string;
  readonly unit: string;
  readonly series: readonly Series[];
  /** data[0]: x (seconds since the epoch); data[i + 1]: series i, null where unknown. */
  readonly data: readonly (readonly (number | null)[])[];
  readonly testId: string;
}

const HEIGHT = 220;

export function UplotChart({ title, unit, series, data, testId }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = container.current;
    if (element === null) return undefined;
    const options: uPlot.Options = {
      title,
      width: Math.max(300, element.clientWidth),
      height: HEIGHT,
      scales: { x: { time: true }, y: { range: (_u, min, max) => [0, Math.max(max, min + 1e-9, 1e-9) * 1.1] } },
      axes: [{}, { label: unit, size: 60 }],
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.colour, width: 2, spanGaps: true }))],
    };
    const instance = new uPlot(options, data as uPlot.AlignedData, element);
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.setSize({ width: Math.max(300, element.clientWidth), height: HEIGHT }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      instance.destroy();
      chart.current = null;
    };
    // The chart's shape is fixed per mount; only its data changes.
  }, []);

  useEffect(() => {
    chart.current?.setData(data as uPlot.AlignedData);
  }, [data]);

  return <div class="chart" ref={container} data-testid={testId} data-samples={data[0]?.length ?? 0} />;
}
