/** Drives health-poller-child.ts: how long the service could not answer /healthz between two marks. */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./health-poller-child.js', import.meta.url));

export interface PollWindow {
  /** The slowest /healthz answer in the window, in ms. */
  readonly longestMs: number;
  readonly longestUrl: string;
  readonly polls: number;
  /** Polls that failed or were not 200. */
  readonly failures: number;
}

export interface HealthPoller {
  /** Ends the current window and starts the next one. */
  mark(): Promise<PollWindow>;
  stop(): void;
}

export async function startHealthPoller(urls: readonly string[]): Promise<HealthPoller> {
  const child = fork(CHILD, [...urls], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`the health poller exited (${code})`)));
  });
  return {
    mark: () =>
      new Promise<PollWindow>((resolve) => {
        child.once('message', (message) => resolve(message as PollWindow));
        child.send('mark');
      }),
    stop: () => {
      child.send('stop');
    },
  };
}
