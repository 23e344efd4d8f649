/**
 * Long work written once as a generator of steps, run either to its end at once (the embedded
 * `Database.open`) or in slices between other work on the event loop (the service's start-up,
 * which answers its probes meanwhile). Each `yield` marks a point where the work may pause; a
 * step between two yields should take at most a few milliseconds.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs every step now. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}

/**
 * Runs the steps in slices of about `sliceMs`, with a turn of the event loop (setImmediate, so
 * I/O callbacks run) between slices. `stop` is asked between slices: when it answers an error,
 * the steps are abandoned and the promise rejects with it.
 */
export async function runStepsInSlices<T>(steps: Steps<T>, sliceMs: number, stop: () => Error | undefined = () => undefined): Promise<T> {
  for (;;) {
    const end = performance.now() + sliceMs;
    for (;;) {
      const next = steps.next();
      if (next.done === true) return next.value;
      if (performance.now() >= end) break;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
    const reason = stop();
    if (reason !== undefined) {
      steps.return(undefined as T);
      throw reason;
    }
  }
}
