/**
 * The scroll order as docs/qdrant.md ("Point ids") states it, written apart from src/ (compareIds):
 * integer ids by value, then UUIDs (canonical text), then every other id by UTF-16 code unit.
 */
export function referenceOrder(a: string, b: string): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

function rank(id: string): number {
  if (/^(0|[1-9][0-9]*)$/.test(id) && Number.isSafeInteger(Number(id))) return 0;
  return /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(id) ? 1 : 2;
}
