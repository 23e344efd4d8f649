/**
 * Crash test for applied positions: a child process applies a log to a collection (upserts and
 * deletes, some large enough for the writer thread, each carrying its log position and taking it
 * as its version: test/helpers/applied-writer-child.ts); SIGKILL lands mid-stream. After a reopen
 * the stored position is at least the last acknowledged one, and the records are exactly the log
 * applied up to it: never a record ahead of the position, never the position ahead of a record.
 * Each round resumes from the position the last one left, as a replica would.
 */
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SeededRng } from '../../src/core/rng.js';
import { Database } from '../../src/db/database.js';
import { testSeed } from '../helpers/data.js';
import { logEntry } from '../helpers/applied-writer-child.js';
import { tempDbPath } from '../helpers/temp-dir.js';

const CHILD = fileURLToPath(new URL('../helpers/applied-writer-child.js', import.meta.url));

/** The points (id → version) the log holds once applied up to `sequence`. */
function expectedUpTo(sequence: number): Map<string, bigint> {
  const points = new Map<string, bigint>();
  for (let s = 1; s <= sequence; s++) {
    const entry = logEntry(s);
    if ('upsert' in entry) for (const id of entry.upsert) points.set(id, BigInt(s));
    else {
      const target = logEntry(entry.deleteOf);
      if ('upsert' in target) for (const id of target.upsert) points.delete(id);
    }
  }
  return points;
}

test('SIGKILL while applying a log: the stored applied position and the records always agree', async (t) => {
  const seed = testSeed(2026);
  const rng = new SeededRng(seed);
  const path = tempDbPath(t);
  let lastAcked = 0;
  for (let round = 0; round < 3; round++) {
    const child = fork(CHILD, [path], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    t.after(() => child.kill('SIGKILL'));
    const startAcked = lastAcked;
    child.on('message', (sequence) => {
      lastAcked = sequence as number;
    });
    // Killed at a random moment once a few entries of this round (a large one among them, often) are durable.
    const want = startAcked + 3 + rng.int(10);
    const deadline = Date.now() + 120_000;
    while (lastAcked < want && child.exitCode === null && Date.now() < deadline) await sleep(5);
    await sleep(rng.int(300));
    child.kill('SIGKILL');
    await exited;
    const ackedAtKill = lastAcked;
    assert.ok(ackedAtKill >= want, `[seed ${seed}] round ${round}: only ${ackedAtKill} entries acknowledged`);

    const db = Database.open(path);
    try {
      const log = db.collection('log');
      const applied = log.appliedPosition;
      assert.equal(applied?.stream, 's');
      const at = Number(applied?.sequence);
      assert.ok(at >= ackedAtKill && at <= ackedAtKill + 1, `[seed ${seed}] applied ${at}, last acknowledged ${ackedAtKill}`);
      const stored = new Map<string, bigint>();
      const ids = log.matchingPoints().map((p) => p.id);
      for (const record of await log.retrieve(ids)) stored.set(record.id, record.version);
      const expected = expectedUpTo(at);
      assert.equal(stored.size, expected.size, `[seed ${seed}] round ${round}: ${stored.size} points stored, the log up to ${at} holds ${expected.size}`);
      assert.deepEqual(stored, expected, `[seed ${seed}] round ${round}: records differ from the log applied up to ${at}`);
    } finally {
      await db.close();
    }
  }
});
