/**
 * Runs one benchmark job in a fresh `node --expose-gc` process (so one engine's heap, JIT state
 * and freed native memory do not leak into the next one's numbers) and returns what it reports
 * over IPC. The child's stdout goes to our stderr: our stdout carries only the tables and the
 * final JSON line. A child that exits without reporting becomes `failed(reason)`.
 */
import { fork } from 'node:child_process';

export function runChildWorker<Job extends object, Result>(workerPath: string, job: Job, failed: (reason: string) => Result): Promise<Result> {
  return new Promise((resolve) => {
    const child = fork(workerPath, [], { execArgv: [...process.execArgv, '--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    child.stdout?.pipe(process.stderr, { end: false });
    let result: Result | undefined;
    let failure: string | undefined;
    child.on('message', (message) => {
      result = message as Result;
    });
    child.on('error', (error) => {
      failure = error.message;
    });
    child.on('exit', (code, signal) => {
      resolve(result ?? failed(failure ?? `the worker exited with ${signal ?? `code ${code}`} before reporting`));
    });
    child.send(job);
  });
}
