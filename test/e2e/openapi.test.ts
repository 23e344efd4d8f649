import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { openTestApp } from '../helpers/app.js';

test('GET /openapi.json is the committed openapi/openapi.json (run `npm run openapi` after changing a schema)', async (t) => {
  const { call } = await openTestApp(t);
  const served = await call('GET', '/openapi.json');
  assert.equal(served.status, 200);
  const committed = JSON.parse(readFileSync(new URL('../../../openapi/openapi.json', import.meta.url), 'utf8'));
  assert.deepEqual(served.body, committed);
});

test('the OpenAPI document lists every endpoint of the interface with its methods', async (t) => {
  const { call } = await openTestApp(t);
  const doc = (await call('GET', '/openapi.json')).body;
  const methods = Object.fromEntries(Object.entries(doc.paths).map(([path, ops]) => [path, Object.keys(ops as object).sort()]));
  assert.deepEqual(methods['/collections'], ['get', 'post']);
  assert.deepEqual(methods['/collections/{name}'], ['delete', 'get', 'patch']);
  assert.deepEqual(methods['/collections/{name}/points'], ['put']);
  assert.deepEqual(methods['/collections/{name}/points/search'], ['post']);
  assert.deepEqual(methods['/collections/{name}/points/delete'], ['post']);
  assert.ok(doc.components.schemas.Filter, 'the filter language is a named schema');
});
