/**
 * The data the dashboard's browser tests look at, loaded over HTTP into a real server: `demo`, 300
 * points of 8 dimensions in four clusters (one per colour, so the projection shows groups) with
 * payloads of every kind, on HNSW; `small`, a flat Euclidean collection of 12 points.
 */
import assert from 'node:assert/strict';
import { SeededRng } from '../../src/core/rng.js';

export const DEMO = 'demo';
export const SMALL = 'small';
export const DEMO_POINTS = 300;
export const DIM = 8;
export const COLOURS = ['red', 'green', 'blue', 'amber'] as const;

async function send(base: string, headers: Record<string, string>, method: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(base + path, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(response.status, 200, `${method} ${path}: ${await response.text()}`);
}

export async function loadDashboardData(base: string, headers: Record<string, string>, seed: number): Promise<void> {
  const rng = new SeededRng(seed);
  const centres = COLOURS.map(() => Array.from({ length: DIM }, () => rng.gaussian() * 4));
  await send(base, headers, 'POST', '/collections', { name: DEMO, vector_size: DIM, distance: 'cosine', hnsw: true });
  const points = Array.from({ length: DEMO_POINTS }, (_, i) => {
    const c = i % COLOURS.length;
    const centre = centres[c] as number[];
    return {
      id: `p${String(i).padStart(3, '0')}`,
      vector: centre.map((x) => x + rng.gaussian()),
      payload: {
        colour: COLOURS[c],
        size: rng.int(100),
        in_stock: i % 3 === 0,
        tags: [`t${i % 5}`, `t${(i * 7) % 5}`],
        maker: { name: `maker-${i % 6}`, country: i % 2 === 0 ? 'NL' : 'FR' },
      },
    };
  });
  for (let i = 0; i < points.length; i += 100) {
    await send(base, headers, 'PUT', `/collections/${DEMO}/points`, { points: points.slice(i, i + 100) });
  }
  await send(base, headers, 'POST', '/collections', {
    name: SMALL,
    vector_size: 3,
    distance: 'euclidean',
    sparse_vectors: { words: { modifier: 'idf' } },
    named_vectors: { colbert: { size: 2, distance: 'dot', multivector: true } },
  });
  await send(base, headers, 'PUT', `/collections/${SMALL}/points`, {
    points: Array.from({ length: 12 }, (_, i) => ({ id: `s${i}`, vector: [i, i % 3, 1], payload: { n: i } })),
  });
}
