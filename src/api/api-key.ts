/**
 * The optional API key (`-api-key`, env KITH_API_KEY), for both listeners: every request but the
 * probes must carry it, as `api-key: <key>` (Qdrant's header) or `Authorization: Bearer <key>`;
 * otherwise 401 ERR_UNAUTHORIZED in the error envelope. Compared in constant time (over SHA-256 digests, so the
 * length of the key does not leak either). Off when no key is set.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { KithError } from '../core/errors.js';

/** Probes stay open, so orchestrators need no secret to check liveness and readiness. */
const OPEN_PATHS = new Set(['/healthz', '/livez', '/readyz']);

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The key a request carries, if any. */
function presentedKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const apiKey = headers['api-key'];
  if (typeof apiKey === 'string') return apiKey;
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(authorization.trim());
    if (m !== null) return m[1];
  }
  return undefined;
}

export function requireApiKey(app: FastifyInstance, key: string | undefined): void {
  if (key === undefined) return;
  const expected = digest(key);
  // Callback-style: it runs on every request (envelope.ts says why).
  app.addHook('onRequest', (request, reply, done) => {
    const path = request.url.split('?')[0] ?? request.url;
    if (OPEN_PATHS.has(path)) return done();
    const given = presentedKey(request.headers);
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return done();
    reply.header('www-authenticate', 'Bearer');
    done(
      new KithError(
        'ERR_UNAUTHORIZED',
        given === undefined ? 'api key required: send it as the api-key header or as Authorization: Bearer' : 'api key is not valid',
      ),
    );
  });
}
