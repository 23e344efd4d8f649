import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { badInput, ERRORS, KithError } from '../../../src/core/errors.js';

const docs = readFileSync(new URL('../../../../docs/errors.md', import.meta.url), 'utf8');

test('every error code is documented in docs/errors.md with its status, and the doc has no stale codes', () => {
  for (const [code, spec] of Object.entries(ERRORS)) {
    assert.match(docs, new RegExp(`\\| \`${code}\` \\| ${spec.status} \\|`), `${code} missing or wrong status in docs/errors.md`);
  }
  const documented = [...docs.matchAll(/\| `(ERR_[A-Z_]+)` \|/g)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), Object.keys(ERRORS).sort());
});

test('KithError carries code and status; badInput prefixes the path', () => {
  const e = badInput('points[3].vector', 'expected 4 numbers, got 3');
  assert.ok(e instanceof KithError);
  assert.equal(e.code, 'ERR_BAD_INPUT');
  assert.equal(e.statusCode, 400);
  assert.equal(e.message, 'points[3].vector: expected 4 numbers, got 3');
  assert.equal(badInput('', 'whole body').message, 'whole body');
  assert.equal(new KithError('ERR_COLLECTION_EXISTS', 'x').statusCode, 409);
});
