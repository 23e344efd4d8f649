import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteQueue } from '../../../src/collection/write-queue.js';

test('writes run one at a time in order; idle() resolves once none is queued or running, also after a failure', async () => {
  const queue = new WriteQueue();
  await queue.idle();
  const order: string[] = [];
  let release: () => void = () => {};
  const first = queue.run(async () => {
    order.push('first starts');
    await new Promise<void>((resolve) => (release = resolve));
    order.push('first ends');
  });
  const second = queue.run(() => {
    order.push('second');
    throw new Error('boom');
  });
  let idle = false;
  const waited = queue.idle().then(() => {
    idle = true;
    order.push('idle');
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(idle, false, 'idle while the first write runs');
  assert.equal(queue.pendingWrites, 2);
  release();
  await first;
  await assert.rejects(second, /boom/);
  await waited;
  assert.deepEqual(order, ['first starts', 'first ends', 'second', 'idle']);
  assert.equal(queue.pendingWrites, 0);
});
