/** A payload as an expandable tree: objects and arrays are <details> elements, leaves are typed values. */

function summary(value: object): string {
  return Array.isArray(value) ? `[${value.length}]` : `{${Object.keys(value).length}}`;
}

function Leaf({ value }: { value: unknown }) {
  if (value === null) return <span class="json-null">null</span>;
  if (typeof value === 'string') return <span class="json-string">{JSON.stringify(value)}</span>;
  // A bigint is an integer the server wrote with more digits than a double holds (lib/exact-json.ts).
  if (typeof value === 'number' || typeof value === 'bigint') return <span class="json-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span class="json-boolean">{String(value)}</span>;
  return <span>{String(value)}</span>;
}

function Node({ name, value, open }: { name: string | null; value: unknown; open: boolean }) {
  const label = name === null ? null : <span class="json-key">{name}: </span>;
  if (value === null || typeof value !== 'object') {
    return (
      <div class="json-leaf">
        {label}
        <Leaf value={value} />
      </div>
    );
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  return (
    <details class="json-node" open={open}>
      <summary>
        {label}
        <span class="json-summary">{summary(value)}</span>
      </summary>
      <div class="json-children">
        {entries.map(([key, child]) => (
          <Node key={key} name={key} value={child} open={false} />
        ))}
      </div>
    </details>
  );
}

export function JsonTree({ value, open = false }: { value: unknown; open?: boolean }) {
  return (
    <div class="json-tree">
      <Node name={null} value={value} open={open} />
    </div>
  );
}
