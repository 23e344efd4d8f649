/**
 * The streaming multipart reader (api/multipart.ts): the field's bytes are exactly what was sent
 * however the body is cut into chunks (every split point of a body whose field holds bytes that
 * look like a delimiter's start), other parts are skipped, and a body cut short is refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { multipartBoundary, multipartField } from '../../../src/api/multipart.js';
import { SeededRng } from '../../../src/core/rng.js';

async function read(chunks: Buffer[], boundary: string, field: string): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const piece of multipartField(
    (async function* () {
      yield* chunks;
    })(),
    boundary,
    field,
  ))
    out.push(piece);
  return Buffer.concat(out);
}

test('the field is read whole at every chunk split, past look-alike delimiters and other parts', async () => {
  const rng = new SeededRng(17);
  const boundary = '----kithBoundary42';
  const data = Buffer.concat([
    Buffer.from(`\r\n--${boundary.slice(0, 10)}`),
    Buffer.from(Array.from({ length: 300 }, () => Math.floor(rng.next() * 256))),
    Buffer.from('\r\n--'),
  ]);
  const body = Buffer.concat([
    Buffer.from(`preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="snapshot"; filename="a.snapshot"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\nepilogue`),
  ]);
  for (let split = 1; split < body.length; split++) {
    assert.deepEqual(await read([body.subarray(0, split), body.subarray(split)], boundary, 'snapshot'), data, `split at ${split}`);
  }
  // One byte at a time.
  assert.deepEqual(
    await read(
      [...body].map((b) => Buffer.from([b])),
      boundary,
      'snapshot',
    ),
    data,
  );
  assert.deepEqual(await read([body], boundary, 'note'), Buffer.from('hello'));
  await assert.rejects(read([body.subarray(0, body.length - 20)], boundary, 'snapshot'), /cut short/);
  await assert.rejects(read([body], boundary, 'missing'), /no "missing" field/);
});

test('the boundary of a content type', () => {
  assert.equal(multipartBoundary('multipart/form-data; boundary=abc'), 'abc');
  assert.equal(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b"'), 'a b');
  assert.equal(multipartBoundary('multipart/form-data'), undefined);
  assert.equal(multipartBoundary('application/json; boundary=abc'), undefined);
});
