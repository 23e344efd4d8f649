/**
 * The key a raw id names, written plainly from the rule of docs/qdrant.md ("Point ids"): a number
 * is its decimal text; a string that spells a UUID (hyphenated in any case, 32 hex digits,
 * `{braced}`, `urn:uuid:`) is the lowercase hyphenated UUID; any other string is itself.
 */
export function idKey(raw: number | string): string {
  if (typeof raw === 'number') return String(raw);
  const hyphenated = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
  let body = raw;
  if (/^urn:uuid:/i.test(body) && body.length === 45) body = body.slice(9);
  else if (body.startsWith('{') && body.endsWith('}') && body.length === 38) body = body.slice(1, -1);
  if (hyphenated.test(body)) return body.toLowerCase();
  if (/^[0-9a-fA-F]{32}$/.test(raw)) {
    const h = raw.toLowerCase();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  return raw;
}
