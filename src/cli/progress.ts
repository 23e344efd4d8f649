/**
 * Progress of a long command on stderr: a cli-progress bar (points/s, ETA) when stderr is a
 * terminal; otherwise one plain line per durable batch, so a log shows how far an import got.
 */
import { SingleBar } from 'cli-progress';

export interface Progress {
  /** `done` units of `total` (bytes of the file for import, points for export); `points` so far. */
  update(done: number, points: number, note: string): void;
  stop(): void;
}

export function startProgress(total: number, quiet: boolean): Progress {
  const started = performance.now();
  const rate = (points: number): number => Math.round(points / Math.max(0.001, (performance.now() - started) / 1000));
  if (quiet) return { update() {}, stop() {} };
  if (process.stderr.isTTY !== true) {
    return {
      update(_done, points, note) {
        process.stderr.write(`kith: ${note} (${points} point${points === 1 ? '' : 's'}, ${rate(points)} points/s)\n`);
      },
      stop() {},
    };
  }
  const bar = new SingleBar({
    stream: process.stderr,
    format: '{bar} {percentage}% | {points} points | {rate} points/s | ETA {eta_formatted}',
    hideCursor: true,
    etaBuffer: 50,
    barsize: 30,
  });
  bar.start(Math.max(1, total), 0, { points: 0, rate: 0 });
  return {
    update(done, points) {
      bar.update(done, { points, rate: rate(points) });
    },
    stop() {
      bar.stop();
    },
  };
}
