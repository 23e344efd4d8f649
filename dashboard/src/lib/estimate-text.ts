/**
 * A filter's estimated matches (explain's `estimate`, docs/filters.md) in words. A bracket of one
 * number is a count; a counted estimate is "about" its expected value; an estimate the payload
 * indexes could not count (`counted: false`) is only its bracket, since its expected value is a
 * midpoint standing in for what was not counted.
 */
export interface EstimateLike {
  readonly min: number;
  readonly expected: number;
  readonly max: number;
  readonly counted: boolean;
}

const count = (n: number): string => Math.round(n).toLocaleString('en');
/** "1 point matches", "3 points match". */
const pointsMatch = (n: number): string => (Math.round(n) === 1 ? '1 point matches' : `${count(n)} points match`);

export function estimateText(estimate: EstimateLike): string {
  const { min, expected, max } = estimate;
  if (min === max) return pointsMatch(min);
  if (!estimate.counted) return `the payload indexes cannot count it: between ${count(min)} and ${count(max)} points match`;
  return `about ${pointsMatch(expected)} (${count(min)}–${count(max)})`;
}
