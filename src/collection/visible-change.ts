/**
 * A change to a collection's memory that readers must see wholly or not at all (publishing a batch,
 * deleting points), applied in slices so that it does not hold the service thread. While it is
 * under way:
 * - reads on search threads wait: the read-write gate is held across the slices;
 * - asynchronous reads on this thread (`Collection.searchParallel`, routes that await `settled`)
 *   wait for it to end;
 * - a synchronous read (`getPoint`, `search`, …) finishes it first (`settleNow`): it then sees the
 *   whole change, at the cost of the rest of it at once. Between two slices nothing has read
 *   the half-changed memory — on threads the gate is held, here every reader settles first — so
 *   finishing it on this thread, out of its slices, is safe;
 * - the point count reads as before the change.
 */
import { nextTurn, SLICE_MS } from '../core/time-slices.js';
import type { ReadWriteGate } from '../threads/read-write-gate.js';

/** Applies more of the change, until about `deadline` (performance.now()); returns true once all of it is applied. */
export type ChangeStep = (deadline: number) => boolean;

/** Runs a step of the change, repairing memory if it fails (Collection.applyOrReload). */
export type StepGuard = <T>(apply: () => T) => T;

interface Change {
  readonly step: ChangeStep;
  readonly countBefore: number;
  started: boolean;
  finished: boolean;
  readonly done: Promise<void>;
}

export class VisibleChanges {
  private current: Change | undefined;

  constructor(
    private readonly gate: ReadWriteGate,
    private readonly guard: StepGuard,
  ) {}

  /** The point count to report: the count before the change under way, if any. */
  get countBefore(): number | undefined {
    return this.current?.countBefore;
  }

  /** Applies the change in slices of about SLICE_MS (see above); `countBefore` is the point count before it. */
  async apply(countBefore: number, step: ChangeStep): Promise<void> {
    let resolve = (): void => {};
    const change: Change = { step, countBefore, started: false, finished: false, done: new Promise<void>((r) => (resolve = r)) };
    this.current = change;
    this.gate.hold();
    try {
      while (!change.finished) {
        await this.gate.write(() => this.advance(change, performance.now() + SLICE_MS));
        if (!change.finished) await nextTurn();
      }
    } finally {
      this.current = undefined;
      this.gate.release();
      resolve();
    }
  }

  /** Finishes the change under way now, for a synchronous reader (see above). */
  settleNow(): void {
    const change = this.current;
    if (change?.started) this.advance(change, Number.POSITIVE_INFINITY);
  }

  /** Resolves once no change is under way. */
  async settled(): Promise<void> {
    while (this.current !== undefined) await this.current.done;
  }

  private advance(change: Change, deadline: number): void {
    if (change.finished) return;
    change.started = true;
    try {
      if (this.guard(() => change.step(deadline))) change.finished = true;
    } catch (error) {
      // The guard rebuilt memory from the file, which holds the whole change.
      change.finished = true;
      throw error;
    }
  }
}
