/** A scatter plot on a canvas (sharp on high-density screens): one dot per point, its own colour. */
import { useEffect, useRef } from 'preact/hooks';

const WIDTH = 640;
const HEIGHT = 440;
const MARGIN = 28;
const BACKGROUND = '#ffffff';

interface Props {
  readonly xs: Float64Array;
  readonly ys: Float64Array;
  readonly colours: readonly string[];
  readonly xLabel: string;
  readonly yLabel: string;
}

function extent(values: Float64Array): [number, number] {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (!Number.isFinite(min)) return [-1, 1];
  return max - min < 1e-12 ? [min - 1, max + 1] : [min, max];
}

export function ScatterCanvas({ xs, ys, colours, xLabel, yLabel }: Props) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const element = canvas.current;
    const context = element?.getContext('2d');
    if (element === null || element === undefined || context === null || context === undefined) return;
    const ratio = window.devicePixelRatio || 1;
    element.width = WIDTH * ratio;
    element.height = HEIGHT * ratio;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.fillStyle = BACKGROUND;
    context.fillRect(0, 0, WIDTH, HEIGHT);
    const [x0, x1] = extent(xs);
    const [y0, y1] = extent(ys);
    const px = (x: number): number => MARGIN + ((x - x0) / (x1 - x0)) * (WIDTH - 2 * MARGIN);
    const py = (y: number): number => HEIGHT - MARGIN - ((y - y0) / (y1 - y0)) * (HEIGHT - 2 * MARGIN);
    context.strokeStyle = '#d0d0d0';
    context.strokeRect(MARGIN - 6, MARGIN - 6, WIDTH - 2 * MARGIN + 12, HEIGHT - 2 * MARGIN + 12);
    context.fillStyle = '#555555';
    context.font = '12px system-ui, sans-serif';
    context.fillText(xLabel, WIDTH / 2 - 40, HEIGHT - 6);
    context.save();
    context.translate(12, HEIGHT / 2 + 40);
    context.rotate(-Math.PI / 2);
    context.fillText(yLabel, 0, 0);
    context.restore();
    context.globalAlpha = 0.8;
    for (let i = 0; i < xs.length; i++) {
      context.fillStyle = colours[i] ?? '#888888';
      context.beginPath();
      context.arc(px(xs[i] as number), py(ys[i] as number), 3.5, 0, 2 * Math.PI);
      context.fill();
    }
    context.globalAlpha = 1;
  }, [xs, ys, colours, xLabel, yLabel]);
  return <canvas ref={canvas} class="scatter" data-testid="projection-canvas" data-points={xs.length} width={WIDTH} height={HEIGHT} />;
}
