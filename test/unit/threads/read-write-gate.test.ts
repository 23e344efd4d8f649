import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ReadWriteGate } from '../../../src/threads/read-write-gate.js';

/** A promise and its resolver, to hold a read open until the test lets it finish. */
function held(): { promise: Promise<void>; release: () => void } {
  let release = (): void => {};
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { promise, release };
}

const turns = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

test('a change waits for the reads in flight, and reads that arrive meanwhile wait for the change', async () => {
  const gate = new ReadWriteGate();
  const events: string[] = [];
  const first = held();
  const reading = gate.read(async () => {
    events.push('read 1 starts');
    await first.promise;
    events.push('read 1 ends');
  });
  await turns();
  const writing = gate.write(() => {
    events.push('change applied');
    return 42;
  });
  await turns();
  const late = gate.read(async () => {
    events.push('read 2 runs');
  });
  await turns();
  assert.deepEqual(events, ['read 1 starts'], 'the change waits for read 1; read 2 waits for the change');
  first.release();
  assert.equal(await writing, 42);
  await Promise.all([reading, late]);
  assert.deepEqual(events, ['read 1 starts', 'read 1 ends', 'change applied', 'read 2 runs']);
  assert.equal(gate.activeReaders, 0);
});

test('reads run together; a failing read or change leaves the gate usable', async () => {
  const gate = new ReadWriteGate();
  const a = held();
  const b = held();
  let running = 0;
  let most = 0;
  const read = (h: { promise: Promise<void> }): Promise<void> =>
    gate.read(async () => {
      running++;
      most = Math.max(most, running);
      await h.promise;
      running--;
    });
  const both = Promise.all([read(a), read(b)]);
  await turns();
  assert.equal(most, 2, 'two reads in flight at once');
  a.release();
  b.release();
  await both;
  await assert.rejects(
    gate.read(async () => Promise.reject(new Error('read failed'))),
    /read failed/,
  );
  await assert.rejects(
    gate.write(() => {
      throw new Error('change failed');
    }),
    /change failed/,
  );
  assert.equal(await gate.read(async () => 'still open'), 'still open');
  assert.equal(await gate.write(() => 'still writable'), 'still writable');
});
