/**
 * A database whose HNSW graph was never saved: written through the embedded API in a child
 * process that exits without closing the database, as if it were killed once every write had been
 * acknowledged (each write is durable before it resolves). A start on it inserts every point into
 * a new graph, so its load takes a while: what the start-up tests need to watch a load happen.
 */
import { spawn } from 'node:child_process';

const DATABASE_JS = new URL('../../src/db/database.js', import.meta.url).href;
const RNG_JS = new URL('../../src/core/rng.js', import.meta.url).href;
const DATA_JS = new URL('./data.js', import.meta.url).href;

export interface UnsavedGraphDb {
  /** Points in collection `c` (ids 0 … points − 1, payload `{i}`), its dimension and metric. */
  readonly points: number;
  readonly dim: number;
  readonly distance: 'euclid';
  /** The seed of the vectors: `randomVectors(new SeededRng(seed), points, dim)` (helpers/data.ts). */
  readonly seed: number;
}

export async function buildUnsavedGraphDb(path: string, db: Omit<UnsavedGraphDb, 'distance'>): Promise<UnsavedGraphDb> {
  const script = `
    import { Database } from ${JSON.stringify(DATABASE_JS)};
    import { SeededRng } from ${JSON.stringify(RNG_JS)};
    import { randomVectors } from ${JSON.stringify(DATA_JS)};
    const vectors = randomVectors(new SeededRng(${db.seed}), ${db.points}, ${db.dim});
    const database = Database.open(${JSON.stringify(path)}, { threads: 1 });
    await database.createCollection({ name: 'c', vector_size: ${db.dim}, distance: 'euclid', hnsw: true });
    const c = database.collection('c');
    for (let start = 0; start < vectors.length; start += 1000) {
      await c.upsert(vectors.slice(start, start + 1000).map((vector, k) => ({ id: start + k, vector, payload: { i: start + k } })));
    }
    // No close: the graph is never saved, as after a kill once the last write was acknowledged.
    process.exit(0);
  `;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`building ${path} failed (${code}):\n${stderr}`))));
  });
  return { ...db, distance: 'euclid' };
}
