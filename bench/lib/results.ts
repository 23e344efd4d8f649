/** Writes a scenario's result as dated JSON: bench/results/<YYYY-MM-DD>-<scenario>.json. */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above this file holding package.json: the repository, from dist/ or dist-bench/. */
function findRepoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bench: no package.json above the running file');
    dir = parent;
  }
  return dir;
}

/** The source tree's bench/results, whichever output folder (dist/, dist-bench/) runs this file. */
export const REPO_DIR = findRepoDir();
export const RESULTS_DIR = join(REPO_DIR, 'bench', 'results');

/** Local calendar date, so a run late in the evening is filed under the day it ran. */
export function localDate(d = new Date()): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** Writes atomically (temp file + rename); a later run on the same day replaces the file. */
export function writeResult(scenario: string, result: unknown, dir = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${localDate()}-${scenario}.json`);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(tmp, path);
  return path;
}
