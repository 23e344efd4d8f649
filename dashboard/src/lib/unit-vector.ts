/** The first unit vector e₁ of a dimension: the fixed query of the listing and of the filter check. */
export function unitVector(size: number): number[] {
  const vector = new Array<number>(size).fill(0);
  vector[0] = 1;
  return vector;
}
