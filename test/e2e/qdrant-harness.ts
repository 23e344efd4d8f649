/**
 * Shared set-up of the Qdrant-dialect suites: one real Database on a temp file, kith's app and the
 * Qdrant app over it, both listening on random loopback ports, and the official client pointed at
 * the Qdrant port with its compatibility check on (its warnings are captured and asserted empty).
 */
import type { TestContext } from 'node:test';
import { QdrantClient } from '@qdrant/js-client-rest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { buildQdrantApp } from '../../src/api/qdrant/app.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from '../helpers/temp-dir.js';

export interface QdrantHarness {
  readonly db: Database;
  readonly client: QdrantClient;
  /** Base URL of the Qdrant port. */
  readonly url: string;
  /** Base URL of kith's own port over the same database. */
  readonly kithUrl: string;
  /** console.warn lines printed so far (the client's compatibility check warns there). */
  readonly warnings: string[];
}

async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ port: 0, host: '127.0.0.1' });
}

export async function startQdrant(t: TestContext): Promise<QdrantHarness> {
  const db = Database.open(tempDbPath(t));
  const qdrantApp = await buildQdrantApp({ db });
  const kithApp = await buildApp({ db });
  const url = await listen(qdrantApp);
  const kithUrl = await listen(kithApp);
  const warnings: string[] = [];
  const originalWarn = console.warn;
  console.warn = (...args: unknown[]) => {
    warnings.push(args.map(String).join(' '));
  };
  const client = new QdrantClient({ url, checkCompatibility: true });
  t.after(async () => {
    console.warn = originalWarn;
    await Promise.all([qdrantApp.close(), kithApp.close()]);
    await db.close();
  });
  // Let the client's version request finish so its warning, if any, is captured.
  await client.versionInfo();
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { db, client, url, kithUrl, warnings };
}

/** JSON over real HTTP, for what the client does not expose (status codes, raw shapes). */
export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, text };
}
