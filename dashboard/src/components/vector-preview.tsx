/**
 * A vector at a glance: its first components, its norm, and all of it as a bar strip (SVG, one bar
 * per component, up to 256 components averaged into buckets beyond that).
 */
const WIDTH = 160;
const HEIGHT = 28;
const MAX_BARS = 256;

function buckets(vector: readonly number[]): number[] {
  if (vector.length <= MAX_BARS) return [...vector];
  const per = vector.length / MAX_BARS;
  return Array.from({ length: MAX_BARS }, (_, b) => {
    const from = Math.floor(b * per);
    const to = Math.max(from + 1, Math.floor((b + 1) * per));
    let sum = 0;
    for (let i = from; i < to; i++) sum += vector[i] ?? 0;
    return sum / (to - from);
  });
}

export function VectorPreview({ vector }: { vector: readonly number[] }) {
  const bars = buckets(vector);
  const peak = Math.max(1e-12, ...bars.map(Math.abs));
  const barWidth = WIDTH / Math.max(1, bars.length);
  const middle = HEIGHT / 2;
  const norm = Math.sqrt(vector.reduce((s, x) => s + x * x, 0));
  const head = vector.slice(0, 4).map((x) => x.toPrecision(3));
  return (
    <div class="vector-preview">
      <svg width={WIDTH} height={HEIGHT} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`vector of ${vector.length} components`}>
        <line x1={0} x2={WIDTH} y1={middle} y2={middle} class="axis" />
        {bars.map((value, i) => {
          const h = (Math.abs(value) / peak) * middle;
          return (
            <rect
              key={i}
              x={i * barWidth}
              width={Math.max(0.5, barWidth - 0.2)}
              y={value >= 0 ? middle - h : middle}
              height={h}
              class={value >= 0 ? 'bar-pos' : 'bar-neg'}
            />
          );
        })}
      </svg>
      <div class="vector-text">
        [{head.join(', ')}
        {vector.length > head.length ? `, … ${vector.length - head.length} more` : ''}] ‖v‖ {norm.toPrecision(3)}
      </div>
    </div>
  );
}
