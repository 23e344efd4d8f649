/**
 * Requests Node's HTTP server would answer by itself, outside the envelope: an HTTP/1.1 request
 * without Host (Node's empty 400) and an `Expect:` other than 100-continue (Node's empty 417).
 * Both ports answer them in their envelope; kith's carries the code, Qdrant's does not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertKithErrorBody } from '../helpers/error-envelope.js';
import { parseRawAnswer, rawHttp } from '../helpers/raw-http.js';
import { qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

test('no Host and an unknown Expect are answered in the envelope on both ports; the service keeps serving', async (t) => {
  const server = await startServer(tempDbPath(t), ['-qdrant-port', '0']);
  t.after(() => server.stop());
  const qdrant = await qdrantUrlOf(server);

  for (const [url, codes] of [
    [server.url, true],
    [qdrant, false],
  ] as const) {
    const what = codes ? 'kith port' : 'Qdrant port';
    const checkBody = (answer: ReturnType<typeof parseRawAnswer>, status: number, message: RegExp): void => {
      assert.equal(answer.status, status, `${what}: ${answer.headers}`);
      assert.match(answer.headers, /content-type: application\/json/i, what);
      if (codes) assertKithErrorBody(answer.body, status, what);
      else assert.deepEqual(Object.keys((answer.body as { status: object }).status), ['error'], what);
      assert.match((answer.body as { status: { error: string } }).status.error, message, what);
    };

    const noHost = parseRawAnswer(await rawHttp(url, 'GET /collections HTTP/1.1\r\nConnection: close\r\n\r\n'));
    checkBody(noHost, 400, /^headers\.host: required/);
    if (codes) assert.equal((noHost.body as { status: { code: string } }).status.code, 'ERR_BAD_REQUEST');

    // HTTP/1.0 needs no Host: it is served.
    const oldHttp = parseRawAnswer(await rawHttp(url, 'GET /collections HTTP/1.0\r\n\r\n'));
    assert.equal(oldHttp.status, 200, `${what}: HTTP/1.0 without Host ${oldHttp.headers}`);

    const expect = parseRawAnswer(
      await rawHttp(
        url,
        'PUT /collections/x/points HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
      ),
    );
    checkBody(expect, 417, /^headers\.expect: "200-ok" cannot be met/);
    if (codes) assert.equal((expect.body as { status: { code: string } }).status.code, 'ERR_EXPECTATION_FAILED');

    // 100-continue is met: the request runs (this collection does not exist, so a 404 in the envelope).
    const proceed = parseRawAnswer(await rawHttp(url, 'GET /collections/nope HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n'));
    checkBody(proceed, 404, /nope/);
  }
  const health = await fetch(`${server.url}/healthz`);
  assert.equal(health.status, 200);
  assert.equal(server.process.exitCode, null);
});
