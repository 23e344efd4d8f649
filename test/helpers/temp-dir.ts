/** Temporary directories for real database files; removed after the test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

export function tempDir(t: Pick<TestContext, 'after'>, prefix = 'kith-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function tempDbPath(t: Pick<TestContext, 'after'>): string {
  return join(tempDir(t), 'kith.db');
}
