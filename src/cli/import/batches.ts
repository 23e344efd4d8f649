/**
 * The import loop: points from a reader, in batches each written all or nothing and durable before
 * the next is sent (the next is read and checked while one is written). It keeps count of what is
 * durable, so that a failed or interrupted import can say exactly how far it got.
 */
import { KithClientError } from '../../api/client/kith-client.js';
import { isKithError } from '../../core/errors.js';
import type { Progress } from '../progress.js';
import { InputFileError, type SourcePoint } from '../readers/source.js';
import type { PointLine, Target } from '../target.js';
import type { SignalWatch } from './interrupt.js';

/** How far an import got; read after it ends, whichever way. */
export interface ImportTally {
  /** Points of the file read (the skipped ones included). */
  read: number;
  /** Points of the file, from its start, that are durable: the skipped ones and those of every batch written. */
  durable: number;
  /** Where the last durable point is in the file (`FILE:LINE`), once one is. */
  durableThrough: string | undefined;
  /** Points written: each batch's count of distinct ids (the server's `upserted`), summed. */
  written: number;
  batches: number;
}

export interface BatchOptions {
  readonly collection: string;
  readonly batchSize: number;
  /** The first `skip` points of the file are read and checked, not written (a resume). */
  readonly skip: number;
  readonly signals: SignalWatch;
  readonly progress: Progress;
}

/** The import stopped on SIGINT/SIGTERM after its last batch settled. */
export class ImportInterrupted extends Error {
  override readonly name = 'ImportInterrupted';
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted (${signal})`);
  }
}

/** An error the engine or the server raised for `points[i]…` of a batch, told as the file location of that point. */
function locate(error: unknown, batch: readonly SourcePoint[]): unknown {
  if (!(isKithError(error) || error instanceof KithClientError) || (error.code !== 'ERR_BAD_INPUT' && error.code !== 'ERR_INVALID_JSON')) return error;
  const m = /^points\[(\d+)\]\.?(.*)$/s.exec(error.message);
  const source = m === null ? undefined : batch[Number(m[1])];
  return source === undefined ? error : new InputFileError(`${source.location}: ${m?.[2]}`);
}

export function newTally(): ImportTally {
  return { read: 0, durable: 0, durableThrough: undefined, written: 0, batches: 0 };
}

export async function writeBatches(target: Target, source: AsyncIterable<SourcePoint>, options: BatchOptions, tally: ImportTally): Promise<void> {
  const { collection, batchSize, skip, signals, progress } = options;
  let batch: SourcePoint[] = [];
  /** Whether the file's points carry versions: decided by the first point, the same for every other. */
  let versioned: boolean | undefined;
  /**
   * One batch is written while the next is read and checked: at most one in flight, so batches
   * still become durable in file order, and a later batch is sent only once the one before it is
   * durable.
   */
  let inFlight: Promise<void> | undefined;
  const write = async (current: SourcePoint[]): Promise<void> => {
    let upserted: number;
    try {
      upserted = await target.upsert(
        collection,
        current.map((s): PointLine => s.point),
      );
    } catch (error) {
      throw locate(error, current);
    }
    const last = current[current.length - 1] as SourcePoint;
    tally.durable += current.length;
    tally.durableThrough = last.location;
    tally.written += upserted;
    tally.batches++;
    progress.update(last.bytesRead, tally.written, `durable through ${last.location}`);
  };
  const settle = async (): Promise<void> => {
    const pending = inFlight;
    inFlight = undefined;
    if (pending !== undefined) await pending;
  };
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const current = batch;
    batch = [];
    await settle();
    const pending = write(current);
    // Handled when settled; without this, a failure while the next batch is read counts as unhandled.
    pending.catch(() => {});
    inFlight = pending;
  };
  try {
    for await (const item of source) {
      if (signals.received !== undefined) break;
      tally.read++;
      const hasVersion = item.point.version !== undefined;
      if (versioned === undefined) {
        versioned = hasVersion;
        if (versioned && !target.keepsVersions)
          process.stderr.write(
            `kith: warning: the file's versions are not kept over --url (the server gives each batch a new one); import with --db to keep them\n`,
          );
      } else if (hasVersion !== versioned) {
        throw new InputFileError(
          `${item.location}: version: ${versioned ? 'required: the first point has one, so every point must' : 'unexpected: the first point has none, so no point may'}`,
        );
      }
      if (tally.read <= skip) {
        // Skipped points were written by an earlier run: they count as durable.
        tally.durable = tally.read;
        tally.durableThrough = item.location;
        continue;
      }
      batch.push(item);
      if (batch.length >= batchSize) await flush();
    }
    const signal = signals.received;
    if (signal !== undefined) {
      await settle();
      throw new ImportInterrupted(signal);
    }
    if (tally.read < skip) throw new InputFileError(`--skip ${skip}: the file has only ${tally.read} points`);
    await flush();
    await settle();
  } catch (error) {
    // The batch already sent ends first (its failure, earlier in the file, is the one reported);
    // then the error of the line read after it.
    await settle();
    throw error;
  }
}
