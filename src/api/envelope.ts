/**
 * The envelopes. `time` is measured from the `onRequest` hook registered by `trackRequestTime`
 * (Fastify's own `elapsedTime` is only kept when a logger is on).
 *
 * Hooks on every request are callback-style, not `async`: an async hook costs a promise and a
 * microtask turn per request, measurable on a search that itself takes ~0.1 ms
 * (docs/architecture.md, "The serving path").
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { jsonSliced } from './sliced-json.js';

const startedAt = Symbol('kith.startedAt');

declare module 'fastify' {
  interface FastifyRequest {
    [startedAt]: number;
  }
}

export function trackRequestTime(app: FastifyInstance): void {
  app.decorateRequest(startedAt, 0);
  app.addHook('onRequest', (request, _reply, done) => {
    request[startedAt] = performance.now();
    done();
  });
}

function secondsSince(reply: FastifyReply): number {
  // Requests refused before routing (frameworkErrors) never ran the onRequest hook.
  const start = reply.request[startedAt];
  return typeof start !== 'number' || start === 0 ? 0 : (performance.now() - start) / 1000;
}

/** `{"status":"ok","result":…,"time":<seconds>}` */
export function ok<T>(reply: FastifyReply, result: T): { status: 'ok'; result: T; time: number } {
  return { status: 'ok', result, time: secondsSince(reply) };
}

/**
 * The same envelope as `ok`, as JSON text around a result that is already JSON text (the search
 * routes write their hits directly, api/search-json.ts). Sent as a string with the JSON content
 * type, Fastify passes it through without serialising it again.
 */
export function okJson(reply: FastifyReply, resultJson: string): string {
  return `{"status":"ok","result":${resultJson},"time":${secondsSince(reply)}}`;
}

/** `ok` for a result that can be large (hits, pages): written in slices (api/sliced-json.ts), then sent. */
export async function okSliced(reply: FastifyReply, result: unknown): Promise<FastifyReply> {
  const json = await jsonSliced(result);
  return sendJson(reply, okJson(reply, json));
}

/** Sends JSON text as it is, with the content type Fastify gives a serialised body. */
export function sendJson(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}

/** The error envelope: `{"status":{"error":"…","code":"ERR_…"},"time":<seconds>}`; `code` only where the port shows it. */
export interface ErrorEnvelopeBody {
  status: { error: string; code?: string };
  time: number;
}

/**
 * `{"status":{"error":"…","code":"ERR_…"},"time":<seconds>}` on kith's port; without `code` (Qdrant's
 * own shape) on the Qdrant port, whose callers pass no code.
 */
export function errorBody(reply: FastifyReply, message: string, code?: string): ErrorEnvelopeBody {
  return { status: code === undefined ? { error: message } : { error: message, code }, time: secondsSince(reply) };
}
