import assert from 'node:assert/strict';
import { test } from 'node:test';
import { table, toJson } from '../../../src/cli/output.js';
import { checkLine } from '../../../src/cli/readers/jsonl.js';

test('checkLine accepts {id, vector, payload} and names the field of what it refuses', () => {
  assert.deepEqual(checkLine({ id: 7, vector: [1, 2], payload: { a: 1 } }, 2), { id: 7, vector: [1, 2], payload: { a: 1 } });
  assert.deepEqual(checkLine({ id: 'x', vector: [0, -1.5] }, 2), { id: 'x', vector: [0, -1.5] });
  assert.deepEqual(checkLine({ id: 'x', vector: [0, 1], payload: null }, 2), { id: 'x', vector: [0, 1] });
  // A version as kith export writes it (a decimal string up to 2^64 − 1), or a safe integer.
  assert.deepEqual(checkLine({ id: 'x', version: '18446744073709551615', vector: [0, 1] }, 2), { id: 'x', version: '18446744073709551615', vector: [0, 1] });
  assert.deepEqual(checkLine({ id: 'x', version: 42, vector: [0, 1] }, 2), { id: 'x', version: '42', vector: [0, 1] });
  const refused: [unknown, string][] = [
    [[1], 'expected an object {"id", "vector", "payload"}, got an array'],
    [{ vector: [1, 2] }, 'id: required'],
    [{ id: '', vector: [1, 2] }, 'id: expected a non-empty string or a non-negative integer, got ""'],
    [{ id: 1.5, vector: [1, 2] }, 'id: expected a non-empty string or a non-negative integer, got 1.5'],
    [{ id: 1 }, 'vector: required'],
    [{ id: 1, vector: [1, 2, 3] }, 'vector: expected 2 numbers, got 3'],
    [{ id: 1, vector: 'ab' }, 'vector: expected 2 numbers, got "ab"'],
    [{ id: 1, vector: [1, null] }, 'vector[1]: expected a finite number, got null'],
    [{ id: 1, vector: [1, 2], payload: 'p' }, 'payload: expected an object, got "p"'],
    [{ id: 1, vector: [1, 2], score: 3 }, 'score: unknown field (expected id, version, vector, payload)'],
    [{ id: 1, version: '0', vector: [1, 2] }, 'version: expected a positive integer below 2^64 as a decimal string, got "0"'],
    [
      { id: 1, version: '18446744073709551616', vector: [1, 2] },
      'version: expected a positive integer below 2^64 as a decimal string, got "18446744073709551616"',
    ],
    [{ id: 1, version: 1.5, vector: [1, 2] }, 'version: expected a positive integer below 2^64 as a decimal string, got 1.5'],
  ];
  for (const [value, message] of refused) assert.equal(checkLine(value, 2), message, JSON.stringify(value));
});

test('table pads columns and cuts long cells; toJson writes bigint versions as digits', () => {
  assert.equal(
    table(
      ['ID', 'SCORE'],
      [
        ['1', '0.5'],
        ['long-id', '1'],
      ],
    ),
    'ID       SCORE\n1        0.5\nlong-id  1',
  );
  assert.equal(table(['A', 'B'], [['abcdef', 'x']], 4), 'A     B\nabc…  x');
  assert.equal(toJson({ version: 1795484551285159150n }), '{"version":"1795484551285159150"}');
});
