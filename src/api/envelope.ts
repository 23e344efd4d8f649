/**
 * The envelopes. `time` is measured from the `onRequest` hook registered by `trackRequestTime`
 * (Fastify's own `elapsedTime` is only kept when a logger is on).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

const startedAt = Symbol('kith.startedAt');

declare module 'fastify' {
  interface FastifyRequest {
    [startedAt]: number;
  }
}

export function trackRequestTime(app: FastifyInstance): void {
  app.decorateRequest(startedAt, 0);
  app.addHook('onRequest', async (request) => {
    request[startedAt] = performance.now();
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

/** `{"status":{"error":"…"},"time":<seconds>}` */
export function errorBody(reply: FastifyReply, message: string): { status: { error: string }; time: number } {
  return { status: { error: message }, time: secondsSince(reply) };
}
