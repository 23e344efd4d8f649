/**
 * Ctrl-C (SIGINT) and SIGTERM during an import: the first one asks the import to stop reading and
 * let the batch being written become durable, so that it can say exactly how far it got and how to
 * resume; a second one ends the process at once (every batch already acknowledged stays durable).
 */

export interface SignalWatch {
  /** The signal received, once one has been. */
  readonly received: NodeJS.Signals | undefined;
  /** Gives the signals back their default behaviour. */
  stop(): void;
}

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
const SIGNAL_NUMBER: Readonly<Record<string, number>> = { SIGINT: 2, SIGTERM: 15 };

/** The exit code of a command stopped by `signal`, as shells report it: 128 + the signal's number. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (SIGNAL_NUMBER[signal] ?? 0);
}

export function watchSignals(): SignalWatch {
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== undefined) {
      process.stderr.write(`kith: ${signal} again: stopping now; batches already reported durable stay written\n`);
      process.exit(signalExitCode(signal));
    }
    received = signal;
    process.stderr.write(`kith: ${signal}: stopping after the batch being written (${signal} again stops at once)\n`);
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    get received() {
      return received;
    },
    stop() {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    },
  };
}
