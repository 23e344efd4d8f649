/**
 * A log applier in a child process (killed by the crash tests): opens the database at argv[2],
 * applies log entries 1, 2, 3, … to collection "log" — each an upsert of its points or a delete of
 * an earlier entry's points, with version = sequence and applied position { stream "s", sequence } —
 * and tells the parent each sequence once it is durable. Which entry does what is `logEntry`.
 */

import { Database } from '../../src/db/database.js';
import { LARGE_WRITE_OPERATIONS } from '../../src/storage/point-writer.js';

export const DIM = 4;

/** Entry `sequence` of the log: every fifth deletes entry sequence − 2's points; every seventh is large (committed by the writer thread). */
export function logEntry(sequence: number): { readonly upsert: readonly string[] } | { readonly deleteOf: number } {
  if (sequence % 5 === 0 && sequence > 2) return { deleteOf: sequence - 2 };
  const count = sequence % 7 === 0 ? LARGE_WRITE_OPERATIONS + 10 : 20;
  return { upsert: Array.from({ length: count }, (_, i) => `e${sequence}-${i}`) };
}

async function main(path: string): Promise<void> {
  let next = 0n;
  const versions = { next: () => next };
  const db = Database.open(path, { versions: () => versions });
  if (!db.list().some((c) => c.name === 'log')) await db.createCollection({ name: 'log', vector_size: DIM, distance: 'euclid' }, { versions });
  const log = db.collection('log');
  for (let sequence = Number(log.appliedPosition?.sequence ?? 0n) + 1; ; sequence++) {
    next = BigInt(sequence);
    const applied = { stream: 's', sequence: next };
    const entry = logEntry(sequence);
    if ('upsert' in entry)
      await log.upsert(
        entry.upsert.map((id, i) => ({ id, vector: [sequence, i, 1, 0], payload: { sequence } })),
        { applied },
      );
    else {
      const target = logEntry(entry.deleteOf);
      await log.deleteIds('upsert' in target ? target.upsert : [], { applied });
    }
    process.send?.(sequence);
  }
}

if (process.argv[2] !== undefined && process.send !== undefined) void main(process.argv[2]);
