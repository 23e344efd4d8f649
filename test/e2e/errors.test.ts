import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { type CallResult, openTestApp, type TestApp } from '../helpers/app.js';
import { assertKithErrorBody } from '../helpers/error-envelope.js';

type Call = TestApp['call'];

/** `{"status":{"error":"…","code":"ERR_…"},"time":<number>}` as application/json, with the given status. */
function assertError(r: CallResult, status: number, message?: RegExp, what = ''): void {
  assert.equal(r.status, status, `${what} ${r.raw.slice(0, 300)}`);
  assert.match(String(r.headers['content-type']), /^application\/json/, what);
  assertKithErrorBody(r.body, status, what);
  assert.doesNotMatch(r.raw, /\n\s+at |node_modules|\.js:\d+/, `${what}: looks like a stack trace`);
  if (message !== undefined) assert.match(r.body.status.error, message, what);
}

interface Snapshot {
  count: number;
  points: unknown;
}

/** Collection "c" (dim 2, dot) holding two points. */
async function seeded(t: TestContext, options: { maxBodyMb?: number } = {}): Promise<{ call: Call; before: Snapshot; app: TestApp }> {
  const app = await openTestApp(t, options);
  const { call } = app;
  assert.equal((await call('POST', '/collections', { name: 'c', vector_size: 2, distance: 'dot' })).status, 200);
  const r = await call('PUT', '/collections/c/points', {
    points: [
      { id: 'a', vector: [1, 0], payload: { s: 'alpha', n: 1 } },
      { id: 'b', vector: [0, 1], payload: { s: 'beta', n: 2 } },
    ],
  });
  assert.equal(r.status, 200, r.raw);
  return { call, before: await snapshot(call), app };
}

async function snapshot(call: Call): Promise<Snapshot> {
  const info = await call('GET', '/collections/c');
  assert.equal(info.status, 200, info.raw);
  const all = await call('POST', '/collections/c/points/search', { vector: [1, 1], limit: 10000, with_vector: true });
  assert.equal(all.status, 200, all.raw);
  return { count: info.body.result.points_count, points: all.raw.replace(/"time":[^}]*}$/, '') };
}

/** The collection is as it was, and the service still answers. */
async function assertIntact(call: Call, before: Snapshot, what = ''): Promise<void> {
  assert.deepEqual(await snapshot(call), before, `state changed after ${what}`);
  const health = await call('GET', '/healthz');
  assert.equal(health.status, 200, `healthz after ${what}`);
  assert.deepEqual(health.body.result, { healthy: true });
}

test('an unknown path is a 404 in the error envelope', async (t) => {
  const { call, before } = await seeded(t);
  for (const [method, url] of [
    ['GET', '/nope'],
    ['POST', '/collections/c/search'],
    ['GET', '/collections/c/points/a/extra'],
    ['DELETE', '/collections/c/points/a/b'],
  ] as const) {
    assertError(await call(method, url), 404, undefined, `${method} ${url}`);
    await assertIntact(call, before, `${method} ${url}`);
  }
});

async function assertAllow(call: Call, method: string, url: string, methods: string[]): Promise<void> {
  const r = await call(method, url);
  const what = `${method} ${url}`;
  assertError(r, 405, undefined, what);
  assert.equal(typeof r.headers.allow, 'string', `${what}: Allow header`);
  const allowed = String(r.headers.allow)
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== 'HEAD')
    .sort();
  assert.deepEqual(allowed, methods, `${what}: Allow is ${r.headers.allow}`);
}

test('a wrong method on a known path is a 405 whose Allow header lists the right methods', async (t) => {
  const { call, before } = await seeded(t);
  const cases: Array<[string, string, string[]]> = [
    ['PATCH', '/collections', ['GET', 'POST']],
    ['DELETE', '/collections', ['GET', 'POST']],
    ['PUT', '/collections/c', ['DELETE', 'GET', 'PATCH']],
    ['POST', '/collections/c', ['DELETE', 'GET', 'PATCH']],
    ['DELETE', '/collections/c/points', ['PUT']],
    ['GET', '/collections/c/points', ['PUT']],
    ['POST', '/collections/c/points/a', ['GET']],
    ['DELETE', '/healthz', ['GET']],
  ];
  for (const [method, url, methods] of cases) {
    await assertAllow(call, method, url, methods);
    await assertIntact(call, before, `${method} ${url}`);
  }
});

test('Allow names the methods of every route that matches the path', async (t) => {
  const { call, before } = await seeded(t);
  // GET …/points/search is answered (as the point "search"); POST is the search itself.
  await assertAllow(call, 'PUT', '/collections/c/points/search', ['GET', 'POST']);
  await assertAllow(call, 'DELETE', '/collections/c/points/delete', ['GET', 'POST']);
  await assertIntact(call, before, '405');
});

test('a body over the limit is a 413; a body under it still works', async (t) => {
  const { call, before } = await seeded(t, { maxBodyMb: 1 });
  const big = { points: [{ id: 'big', vector: [1, 1], payload: { s: 'x'.repeat(2 * 1048576) } }] };
  assertError(await call('PUT', '/collections/c/points', big), 413, /limit/);
  assertError(await call('POST', '/collections/c/points/search', { vector: [1, 1], pad: 'x'.repeat(2 * 1048576) }), 413);
  await assertIntact(call, before, '413');
  const small = await call('PUT', '/collections/c/points', { points: [{ id: 'small', vector: [1, 1], payload: { s: 'x'.repeat(512 * 1024) } }] });
  assert.equal(small.status, 200, small.raw);
});

async function injectTyped(app: TestApp, url: string, payload: string, type: string): Promise<CallResult> {
  const response = await app.app.inject({ method: 'POST', url, payload, headers: { 'content-type': type } });
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers: response.headers, body, raw: response.body };
}

test('a body that is not application/json is a 415', async (t) => {
  const { call, before, app } = await seeded(t);
  const body = JSON.stringify({ name: 'new', vector_size: 2, distance: 'dot' });
  for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/plain', 'text/plain; charset=utf-8']) {
    assertError(await injectTyped(app, '/collections', body, type), 415, /^content-type: /, type);
    assertError(await injectTyped(app, '/collections/c/points/search', '{"vector":[1,0]}', type), 415, /^content-type: /, type);
    await assertIntact(call, before, type);
  }
  const list = await call('GET', '/collections');
  assert.deepEqual(
    list.body.result.map((c: { name: string }) => c.name),
    ['c'],
  );
});

test('a JSON body is accepted with a charset parameter and a +json media type', async (t) => {
  const { call, app } = await seeded(t);
  for (const [i, type] of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON', 'application/vnd.kith+json'].entries()) {
    const r = await injectTyped(app, '/collections', JSON.stringify({ name: `n${i}`, vector_size: 2, distance: 'dot' }), type);
    assert.equal(r.status, 200, `${type}: ${r.raw}`);
  }
  assert.equal((await call('GET', '/collections')).body.result.length, 5);
});

test('malformed JSON and empty bodies are 400', async (t) => {
  const { call, before } = await seeded(t);
  for (const text of ['{bad', '{"name":', '[1,]', "{'a':1}", '{"points":[{"id":"a","vector":[1,0]}]}}', 'nul']) {
    assertError(await call('PUT', '/collections/c/points', text), 400, /^body: not valid JSON/, text);
    await assertIntact(call, before, text);
  }
  for (const [method, url] of [
    ['POST', '/collections'],
    ['PUT', '/collections/c/points'],
    ['POST', '/collections/c/points/search'],
    ['POST', '/collections/c/points/delete'],
  ] as const) {
    for (const empty of ['', '   ']) assertError(await call(method, url, empty), 400, /^body: /, `${method} ${url} ${JSON.stringify(empty)}`);
    assertError(await call(method, url, 'null'), 400, /^body: /, `${method} ${url} null`);
    assertError(await call(method, url, '[]'), 400, /^body: /, `${method} ${url} []`);
    await assertIntact(call, before, `empty ${method} ${url}`);
  }
});

test('fields of the wrong type are 400 naming the field', async (t) => {
  const { call, before } = await seeded(t);
  const cases: Array<[string, string, unknown, RegExp]> = [
    ['POST', '/collections', { name: 'n', vector_size: '3', distance: 'dot' }, /^vector_size: /],
    ['POST', '/collections', { name: 5, vector_size: 3, distance: 'dot' }, /^name: /],
    ['POST', '/collections', { name: 'n', vector_size: 3, distance: 'dot', hnsw: 'yes' }, /^hnsw: /],
    ['POST', '/collections/c/points/search', { vector: [1, 0], limit: '5' }, /^limit: /],
    ['POST', '/collections/c/points/search', { vector: [1, 0], filter: [] }, /^filter: /],
    ['POST', '/collections/c/points/search', { vector: [1, 0], filter: 'x' }, /^filter: /],
    ['POST', '/collections/c/points/search', { vector: [1, 0], filter: { must: [{ key: 'n', range: { gt: 'x' } }] } }, /^filter\.must\[0\]\.range\.gt: /],
    ['POST', '/collections/c/points/search', { vector: '1,0' }, /^vector: /],
    ['POST', '/collections/c/points/search', { vector: [1, 0], score_threshold: '0.5' }, /^score_threshold: /],
    ['PUT', '/collections/c/points', { points: 'a' }, /^points: /],
    ['PUT', '/collections/c/points', { points: [{ id: 'a', vector: [1, 0], payload: 'x' }] }, /^points\[0\]\.payload: /],
    ['POST', '/collections/c/points/delete', { filter: [] }, /^filter: /],
  ];
  for (const [method, url, body, message] of cases) {
    assertError(await call(method, url, body), 400, message, JSON.stringify(body));
    await assertIntact(call, before, JSON.stringify(body));
  }
  assert.deepEqual(
    (await call('GET', '/collections')).body.result.map((c: { name: string }) => c.name),
    ['c'],
  );
});

function nestedObjects(depth: number, inner: string): string {
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

test('deeply nested bodies are 4xx, never 500, and the service keeps answering', async (t) => {
  const { call, before } = await seeded(t);
  const deepArrays = '['.repeat(200000) + ']'.repeat(200000);
  const deepFilter = `${'{"must":['.repeat(10000)}{"key":"n","match":{"value":1}}${']}'.repeat(10000)}`;
  const cases: Array<[string, string, string]> = [
    ['PUT', '/collections/c/points', `{"points":[{"id":"d","vector":[1,0],"payload":${nestedObjects(100000, '1')}}]}`],
    ['PUT', '/collections/c/points', `{"points":[{"id":"d","vector":[1,0],"payload":{"k\\u0061":${nestedObjects(100000, '1')}}}]}`],
    ['PUT', '/collections/c/points', `{"points":[{"id":"d","vector":[1,0],"payload":{"x":${deepArrays}}}]}`],
    ['POST', '/collections/c/points/search', `{"vector":[1,0],"filter":${deepFilter}}`],
    ['POST', '/collections/c/points/delete', `{"filter":${deepFilter}}`],
    ['POST', '/collections/c/points/search', `{"vector":[1,0],"filter":{"must":[{"key":"n","match":{"value":${deepArrays}}}]}}`],
    ['POST', '/collections/c/points/search', `{"vector":${deepArrays}}`],
    ['PUT', '/collections/c/points', deepArrays],
    ['POST', '/collections/c/points/search', deepArrays],
    ['POST', '/collections', deepArrays],
    ['POST', '/collections/c/points/delete', deepArrays],
  ];
  for (const [method, url, body] of cases) {
    const what = `${method} ${url} ${body.slice(0, 80)}`;
    const r = await call(method, url, body);
    assert.ok(r.status >= 400 && r.status < 500, `${what}: status ${r.status}`);
    assertError(r, r.status, undefined, what);
    await assertIntact(call, before, what);
  }
  // 64 levels of payload are fine.
  const ok = await call('PUT', '/collections/c/points', `{"points":[{"id":"d","vector":[1,0],"payload":${nestedObjects(63, '1')}}]}`);
  assert.equal(ok.status, 200, ok.raw);
});

test('__proto__ and constructor.prototype keys are 400 naming the path; nothing is stored or polluted', async (t) => {
  const { call, before } = await seeded(t);
  const upsert = (payload: string) => `{"points":[{"id":"a","vector":[9,9]},{"id":"p","vector":[1,0],"payload":${payload}}]}`;
  const cases: Array<[string, string, string, RegExp]> = [
    ['PUT', '/collections/c/points', upsert('{"__proto__":{"polluted":"yes"}}'), /^points\[1\]\.payload\.__proto__: /],
    ['PUT', '/collections/c/points', upsert('{"\\u005f_proto__":{"polluted":"yes"}}'), /^points\[1\]\.payload\.__proto__: /],
    ['PUT', '/collections/c/points', upsert('{"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":"yes"}}'), /^points\[1\]\.payload\.__proto__: /],
    ['PUT', '/collections/c/points', upsert('{"ok":1,"a":{"b":[0,{"__proto__":{"polluted":"yes"}}]}}'), /^points\[1\]\.payload\.a\.b\[1\]\.__proto__: /],
    ['PUT', '/collections/c/points', upsert('{"constructor":{"prototype":{"polluted":"yes"}}}'), /^points\[1\]\.payload\.constructor: /],
    ['PUT', '/collections/c/points', upsert('{"\\u0063onstructor":{"prototype":{"polluted":"yes"}}}'), /^points\[1\]\.payload\.constructor: /],
    ['PUT', '/collections/c/points', upsert('{"x":{"constructor":{"prototype":{"polluted":"yes"}}}}'), /^points\[1\]\.payload\.x\.constructor: /],
    ['PUT', '/collections/c/points', '{"__proto__":{"polluted":"yes"},"points":[]}', /^__proto__: /],
    ['POST', '/collections', '{"name":"n","vector_size":2,"distance":"dot","parameters":{"__proto__":{"k":1}}}', /^parameters\.__proto__: /],
    [
      'POST',
      '/collections/c/points/search',
      '{"vector":[1,0],"filter":{"must":[{"key":"s","match":{"value":{"__proto__":{"polluted":"yes"}}}}]}}',
      /^filter\.must\[0\]\.match\.value\.__proto__: /,
    ],
    [
      'POST',
      '/collections/c/points/delete',
      '{"filter":{"must":[{"key":"s","match":{"value":{"constructor":{"prototype":{}}}}}]}}',
      /^filter\.must\[0\]\.match\.value\.constructor: /,
    ],
  ];
  for (const [method, url, body, message] of cases) {
    assertError(await call(method, url, body), 400, message, body);
    await assertIntact(call, before, body);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, body);
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  }
  assert.equal((await call('GET', '/collections/c/points/p')).status, 404);
  assert.equal((await call('GET', '/collections/n')).status, 404);
});

test('a "constructor" key holding a plain value is an ordinary payload key', async (t) => {
  const { call } = await seeded(t);
  const payload = { constructor: 'x', prototype: 1, toString: 'y', hasOwnProperty: { nested: true } };
  const r = await call('PUT', '/collections/c/points', { points: [{ id: 'k', vector: [1, 1], payload }] });
  assert.equal(r.status, 200, r.raw);
  const got = await call('GET', '/collections/c/points/k');
  assert.deepEqual(got.body.result.payload, payload);
  const byKey = await call('POST', '/collections/c/points/search', {
    vector: [1, 1],
    filter: { must: [{ key: 'constructor', match: { value: 'x' } }] },
  });
  assert.deepEqual(
    byKey.body.result.map((h: { id: string }) => h.id),
    ['k'],
  );
  // Points without the key do not inherit one from Object.prototype.
  const without = await call('POST', '/collections/c/points/search', {
    vector: [1, 1],
    filter: { must_not: [{ key: 'constructor', match: { value: 'x' } }], must: [{ key: 'toString', type: 'regex', match: { value: '.' } }] },
  });
  assert.deepEqual(without.body.result, []);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('regex filters run in linear time; invalid or over-long patterns are 400', async (t) => {
  const { call, before } = await seeded(t);
  const r = await call('PUT', '/collections/c/points', {
    points: [
      { id: 'as', vector: [1, 1], payload: { s: 'a'.repeat(50000) } },
      { id: 'asb', vector: [1, 1], payload: { s: `${'a'.repeat(50000)}b` } },
    ],
  });
  assert.equal(r.status, 200);
  const regexSearch = async (pattern: string): Promise<string[]> => {
    const started = performance.now();
    const res = await call('POST', '/collections/c/points/search', {
      vector: [1, 1],
      with_payload: false,
      filter: { must: [{ key: 's', type: 'regex', match: { value: pattern } }] },
    });
    assert.equal(res.status, 200, res.raw);
    assert.ok(performance.now() - started < 5000, `${pattern} took ${performance.now() - started} ms`);
    return res.body.result.map((h: { id: string }) => h.id).sort();
  };
  assert.deepEqual(await regexSearch('(a+)+$'), ['a', 'as', 'b']);
  assert.deepEqual(await regexSearch('^(a|aa)+$'), ['as']);
  assert.deepEqual(await regexSearch('(a*)*b'), ['asb', 'b']);
  assert.deepEqual(await regexSearch('^(a+)+b$'), ['asb']);
  assert.deepEqual(await regexSearch('^b|et'), ['b']);
  // The longest literal within the compiled-size limit (998 + match and fail = 1000 instructions).
  assert.deepEqual(await regexSearch('a'.repeat(998)), ['as', 'asb']);
  const after = await snapshot(call);

  for (const [pattern, message] of [
    ['(', /^filter\.must\[0\]\.match\.value: /],
    ['[a-', /^filter\.must\[0\]\.match\.value: /],
    ['a**', /^filter\.must\[0\]\.match\.value: /],
    ['(?=a)', /^filter\.must\[0\]\.match\.value: /],
    ['a'.repeat(1025), /^filter\.must\[0\]\.match\.value: .*1024/],
    ['a'.repeat(999), /^filter\.must\[0\]\.match\.value: the compiled pattern has 1001 instructions; the limit is 1000/],
  ] as const) {
    const bad = await call('POST', '/collections/c/points/search', {
      vector: [1, 1],
      filter: { must: [{ key: 's', type: 'regex', match: { value: pattern } }] },
    });
    assertError(bad, 400, message, pattern.slice(0, 40));
    const del = await call('POST', '/collections/c/points/delete', { filter: { must: [{ key: 's', type: 'regex', match: { value: pattern } }] } });
    assertError(del, 400, message, pattern.slice(0, 40));
    await assertIntact(call, after, pattern.slice(0, 40));
  }
  assert.notDeepEqual(after, before);
  assert.equal(after.count, 4);
});

test('a path segment over 4096 characters is a 414 in the envelope that does not echo the path', async (t) => {
  const { call, before } = await seeded(t);
  for (const url of [`/collections/${'a'.repeat(5000)}`, `/collections/c/points/${'p'.repeat(5000)}`, `/collections/${'a'.repeat(5000)}/points/search`]) {
    const r = await call('GET', url);
    assertError(r, 414, /^path: a segment is longer than 4096 characters/, url.slice(0, 40));
    assert.ok(r.raw.length < 400, r.raw.slice(0, 200));
  }
  // At 4096 characters the name reaches the route, which refuses it as a name.
  assertError(await call('GET', `/collections/${'a'.repeat(4096)}`), 400, /^name: /);
  await assertIntact(call, before, '414');
});

test('a trailing slash names no endpoint: 404, not 405 or a route with an empty name', async (t) => {
  const { call, before } = await seeded(t);
  for (const [method, url] of [
    ['GET', '/collections/c/'],
    ['POST', '/collections/'],
    ['GET', '/collections/'],
    ['DELETE', '/collections/c/'],
    ['PUT', '/collections/c/points/'],
    ['GET', '/collections/c/points/a/'],
    ['GET', '/healthz/'],
  ] as const) {
    const r = await call(method, url, method === 'GET' || method === 'DELETE' ? undefined : {});
    assertError(r, 404, /^no endpoint /, `${method} ${url}`);
    assert.equal(r.headers.allow, undefined, `${method} ${url}`);
  }
  await assertIntact(call, before, 'trailing slash');
  assert.equal((await call('GET', '/collections/c')).status, 200);
});

test('a long unknown path is a 404 quoting at most 200 characters of it; broken percent-encoding is a 400', async (t) => {
  const { call, before } = await seeded(t);
  const r = await call('GET', `/${'b'.repeat(100000)}`);
  assertError(r, 404, /^no endpoint GET \/b+… \(100001 characters\)$/);
  assert.ok(r.raw.length < 400, `${r.raw.length} characters`);
  const m = await call('PATCH', `/collections/c/points/${'q'.repeat(4000)}`);
  assertError(m, 405, /allowed: GET/);
  assert.ok(m.raw.length < 500);
  for (const url of ['/%zz', '/collections/%E0%A4%A', '/collections/c/points/%']) {
    assertError(await call('GET', url), 400, /^path: not a valid URL/, url);
  }
  await assertIntact(call, before, 'long path');
});

test('an error message quoting a huge field is cut short', async (t) => {
  const { call, before } = await seeded(t);
  const r = await call('POST', '/collections/c/points/search', {
    vector: [1, 1],
    filter: { must: [{ key: 'a', match: { value: 1 }, ['x'.repeat(100000)]: 1 }] },
  });
  assertError(r, 400, /^filter\.must\[0\]\.x+… \(message cut, \d+ characters\)$/);
  assert.ok(r.raw.length < 2200, `${r.raw.length} characters`);
  await assertIntact(call, before, 'huge key');
});
