/**
 * The error envelope of kith's port, as the contract gives it: `{"status":{"error","code"},"time"}`,
 * where `code` is a code of the error table whose status is the answer's HTTP status.
 */
import assert from 'node:assert/strict';
import { ERRORS } from '../../src/core/errors.js';

export function assertKithErrorBody(body: unknown, httpStatus: number, what = ''): void {
  const envelope = body as { status?: { error?: unknown; code?: unknown }; time?: unknown };
  assert.deepEqual(Object.keys(envelope).sort(), ['status', 'time'], what);
  assert.deepEqual(Object.keys(envelope.status ?? {}), ['error', 'code'], what);
  const message = envelope.status?.error;
  assert.ok(typeof message === 'string' && message.length > 0, what);
  assert.equal(typeof envelope.time, 'number', what);
  const code = envelope.status?.code;
  assert.ok(typeof code === 'string' && Object.hasOwn(ERRORS, code), `${what}: code ${String(code)} is not in the error table`);
  assert.equal(ERRORS[code as keyof typeof ERRORS].status, httpStatus, `${what}: ${code} answered with HTTP ${httpStatus}`);
}
