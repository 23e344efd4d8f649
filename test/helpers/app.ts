/**
 * A real Database on a temp file plus the Fastify app over it, for `inject()` tests.
 * `call()` sends JSON and returns status, headers and the parsed body.
 */
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath } from './temp-dir.js';

export interface CallResult {
  status: number;
  headers: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
  body: any;
  raw: string;
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  dbPath: string;
  call(method: string, url: string, body?: unknown): Promise<CallResult>;
  /** Closes app and database, reopens the same file; returns the new TestApp. */
  reopen(): Promise<TestApp>;
  close(): Promise<void>;
}

async function open(dbPath: string, maxBodyMb: number | undefined, opened: TestApp[]): Promise<TestApp> {
  const db = Database.open(dbPath);
  const app = await buildApp({ db, maxBodyMb });
  let closed = false;
  const testApp: TestApp = {
    app,
    db,
    dbPath,
    async call(method, url, body) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      let parsed: unknown;
      try {
        parsed = JSON.parse(response.body);
      } catch {
        parsed = undefined;
      }
      return { status: response.statusCode, headers: response.headers, body: parsed, raw: response.body };
    },
    async reopen() {
      await testApp.close();
      return open(dbPath, maxBodyMb, opened);
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await db.close();
    },
  };
  opened.push(testApp);
  return testApp;
}

/** Opens a fresh database in a temp dir; closed (and removed) after the test. */
export async function openTestApp(t: TestContext, options: { maxBodyMb?: number } = {}): Promise<TestApp> {
  const opened: TestApp[] = [];
  t.after(async () => {
    for (const a of opened) await a.close();
  });
  return open(tempDbPath(t), options.maxBodyMb, opened);
}

/** Opens the app over an existing database file (e.g. one a test wrote directly); closed after the test. */
export async function openTestAppAt(t: TestContext, dbPath: string): Promise<TestApp> {
  const opened: TestApp[] = [];
  t.after(async () => {
    for (const a of opened) await a.close();
  });
  return open(dbPath, undefined, opened);
}
