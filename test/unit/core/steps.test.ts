/** Work in steps: run at once, or in slices with turns of the event loop between them, stoppable between slices. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSteps, runStepsInSlices, type Steps } from '../../../src/core/steps.js';

/** `count` steps of about `stepMs` each (busy), recording which ran; returns the count. */
function* busySteps(count: number, stepMs: number, ran: number[], cleanedUp: { done: boolean }): Steps<number> {
  try {
    for (let i = 0; i < count; i++) {
      const end = performance.now() + stepMs;
      while (performance.now() < end) {
        // busy, as a load's step is
      }
      ran.push(i);
      yield;
    }
    return count;
  } finally {
    cleanedUp.done = true;
  }
}

test('runSteps runs every step at once and returns the result', () => {
  const ran: number[] = [];
  const cleanedUp = { done: false };
  assert.equal(runSteps(busySteps(5, 0, ran, cleanedUp)), 5);
  assert.deepEqual(ran, [0, 1, 2, 3, 4]);
  assert.equal(cleanedUp.done, true);
});

test('runStepsInSlices lets the event loop run between slices, none much longer than the slice', async () => {
  const ran: number[] = [];
  let turns = 0;
  let lastTurn = performance.now();
  let longestGap = 0;
  const ticking = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - lastTurn);
    lastTurn = now;
    turns++;
  }, 1);
  const started = performance.now();
  lastTurn = started;
  const result = await runStepsInSlices(busySteps(40, 2, ran, { done: false }), 10);
  const elapsed = performance.now() - started;
  clearInterval(ticking);
  assert.equal(result, 40);
  assert.equal(ran.length, 40);
  // 80 ms of work in slices of ~10 ms: the timer ran between them, never held for the whole run
  // (relative, since a busy machine stretches every slice).
  assert.ok(turns >= 4, `${turns} timer turns`);
  assert.ok(longestGap < elapsed / 2, `the event loop was held ${longestGap.toFixed(1)} ms of ${elapsed.toFixed(1)} ms`);
});

test('runStepsInSlices stops between slices when asked: the steps are abandoned (their finally runs) and it rejects', async () => {
  const ran: number[] = [];
  const cleanedUp = { done: false };
  let stopNow = false;
  setTimeout(() => {
    stopNow = true;
  }, 15);
  await assert.rejects(
    runStepsInSlices(busySteps(10_000, 1, ran, cleanedUp), 5, () => (stopNow ? new Error('stop') : undefined)),
    { message: 'stop' },
  );
  assert.ok(ran.length > 0 && ran.length < 10_000, `${ran.length} steps ran`);
  assert.equal(cleanedUp.done, true);
});
