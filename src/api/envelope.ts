/** The success envelope: `{"status":"ok","result":…,"time":<seconds>}`. */
import type { FastifyReply } from 'fastify';

export function ok<T>(reply: FastifyReply, result: T): { status: 'ok'; result: T; time: number } {
  return { status: 'ok', result, time: reply.elapsedTime / 1000 };
}

export function errorBody(reply: FastifyReply, message: string): { status: { error: string }; time: number } {
  return { status: { error: message }, time: reply.elapsedTime / 1000 };
}
