/**
 * Field paths in error messages: `points[3].vector`, `filter.must[0].range.gt`,
 * `points[0].payload["odd key"]`. One format everywhere so users can find the field.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends an object key or an array index to a path. */
export function childPath(parent: string, segment: string | number): string {
  if (typeof segment === 'number') return `${parent}[${segment}]`;
  if (IDENTIFIER.test(segment)) return parent === '' ? segment : `${parent}.${segment}`;
  return `${parent}[${JSON.stringify(segment)}]`;
}

/** Converts a JSON pointer (`/points/3/vector`, as Ajv reports) to a field path. */
export function pointerToPath(pointer: string, root = ''): string {
  if (pointer === '') return root;
  let path = root;
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path = /^(0|[1-9][0-9]*)$/.test(segment) ? childPath(path, Number(segment)) : childPath(path, segment);
  }
  return path;
}
