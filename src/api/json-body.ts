/**
 * The JSON body parser. Replaces Fastify's so that a poisoned key is refused with its path
 * (`points[0].payload.__proto__: …`) instead of a generic message, and so that every parse
 * failure carries our error code.
 */
import type { FastifyInstance } from 'fastify';
import { KithError } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { parseJson } from '../core/json-text.js';
import { forbiddenKeyReason } from '../payload/json-value.js';

export function registerJsonParser(app: FastifyInstance): void {
  // Only JSON: Fastify's text/plain parser goes too, so a cross-site form post gets a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json\s*(;.*)?$/i, { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/** An empty body is "no body" (clients send the JSON content type on DELETE too); routes that need one say so. */
function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new KithError('ERR_INVALID_JSON', `body: not valid JSON (${(error as Error).message})`);
  }
  // JSON.parse makes "__proto__" an own key, harmless by itself; refuse it before any code can
  // merge it. Escapes (\u005f) can spell the key too, so those trigger the scan as well.
  if (text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) rejectForbiddenKeys(value);
  return value;
}

/** Iterative walk (nesting cannot overflow the stack) that throws at the first forbidden key. */
function rejectForbiddenKeys(root: unknown): void {
  const stack: Array<{ node: unknown; path: string }> = [{ node: root, path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: unknown; path: string };
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) if (typeof node[i] === 'object') stack.push({ node: node[i], path: childPath(path, i) });
      continue;
    }
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const reason = forbiddenKeyReason(key, child);
      if (reason !== undefined) throw new KithError('ERR_INVALID_JSON', `${childPath(path, key)}: ${reason}`);
      if (typeof child === 'object') stack.push({ node: child, path: childPath(path, key) });
    }
  }
}
