/**
 * A client that upserts numbered batches into a running service, one at a time, each acknowledged
 * (durable) before the next: the write load of the backup tests, which then check that a copy
 * holds every batch acknowledged before it, each whole.
 */
import type { Collection } from '../../src/collection/collection.js';
import { SeededRng } from '../../src/core/rng.js';
import { randomVectors } from './data.js';
import { httpJson } from './server-process.js';

export type BatchPoint = { id: string; vector: number[]; payload: { batch: number } };

/** Batch `batch`'s points: ids `b<batch>-<i>`, payload `{batch}`, vectors from `seed + batch`. */
export function batchPoints(seed: number, batch: number, size: number, dim: number): BatchPoint[] {
  return randomVectors(new SeededRng(seed + batch), size, dim).map((vector, i) => ({ id: `b${batch}-${i}`, vector, payload: { batch } }));
}

export class BatchWriter {
  /** Batches acknowledged so far, in order. */
  readonly acked: number[] = [];
  /** Why the writer stopped early, if it did. */
  error: unknown;
  private stopping = false;
  private readonly done: Promise<void>;

  constructor(
    url: string,
    collection: string,
    readonly seed: number,
    readonly size: number,
    readonly dim: number,
  ) {
    this.done = (async () => {
      for (let batch = 0; !this.stopping; batch++) {
        const r = await httpJson(url, 'PUT', `/collections/${collection}/points`, { points: batchPoints(seed, batch, size, dim) });
        if (r.status !== 200) throw new Error(`batch ${batch}: ${r.status} ${r.raw}`);
        this.acked.push(batch);
      }
    })().catch((error: unknown) => {
      this.error = error;
    });
  }

  points(batch: number): BatchPoint[] {
    return batchPoints(this.seed, batch, this.size, this.dim);
  }

  /** Resolves once `count` batches are acknowledged (or the writer failed). */
  async waitFor(count: number): Promise<void> {
    while (this.acked.length < count && this.error === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** Stops after the batch in flight; `error` then says whether every batch went through. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.done;
  }
}

/** How many points of each batch a collection holds. */
export function pointsPerBatch(collection: Collection): Map<number, number> {
  const perBatch = new Map<number, number>();
  for (const { payload } of collection.matchingPoints()) perBatch.set(payload.batch as number, (perBatch.get(payload.batch as number) ?? 0) + 1);
  return perBatch;
}
