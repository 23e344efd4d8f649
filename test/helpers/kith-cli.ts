/**
 * The `kith` command line as a child process, for the CLI suites. It runs the compiled entry of
 * this build (dist-<name>/src/cli/entry.js): bin/kith.js always imports dist/, which another build
 * may not be.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const KITH_JS = fileURLToPath(new URL('../../src/cli/entry.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `kith …args` to its end; KITH_API_KEY from the test's environment is not passed on. */
export function kith(args: readonly string[], cwd?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KITH_JS, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KITH_API_KEY: '' } });
    let stdout = '';
    let stderr = '';
    // Decoded as a stream: a multi-byte character split between two chunks stays one character.
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `kith …args`, requires exit 0, returns stdout. */
export async function ok(args: readonly string[]): Promise<string> {
  const run = await kith(args);
  assert.equal(run.code, 0, `kith ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

/** An export's JSON Lines without the versions (which an upsert sets to the time it ran), for comparing points only. */
export function withoutVersions(jsonl: string): string {
  return jsonl.replace(/^\{"id":("(?:[^"\\]|\\.)*"),"version":"\d+",/gm, '{"id":$1,');
}
