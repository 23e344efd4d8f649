/**
 * What the dashboard's browser suites share: the Chromium to drive (or why they skip), the seed of
 * their data, a suite's server and browser with watched pages, screenshots into docs/images/ (only
 * with KITH_SCREENSHOTS=1, so a test run does not change the tree), and small page readers.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { findChromium, launchChromium, type PageWatch, watch } from '../helpers/browser.js';
import { testSeed } from '../helpers/data.js';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';

export const chromiumPath = findChromium();
/** The suites' `skip` option: false, or the reason printed beside each skipped suite. */
export const SKIP_WITHOUT_CHROMIUM: string | false =
  chromiumPath === undefined ? 'no Chromium executable (install the chromium package, or set CHROMIUM_PATH)' : false;
export const seed = testSeed(1101);
export const SCREENSHOTS = process.env.KITH_SCREENSHOTS === '1';
const IMAGES = fileURLToPath(new URL('../../../docs/images/', import.meta.url));

export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}dashboard-${name}.png` });
}

/**
 * Polls `condition` from the test's side (the page's CSP forbids the string evaluation
 * waitForFunction would need) until it holds, or fails after `ms`.
 */
export async function until(condition: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.fail(`waited ${ms} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The values of `attribute` on every element matching `selector`, in page order. */
export async function attributes(page: Page, selector: string, attribute: string): Promise<string[]> {
  return page.locator(selector).evaluateAll((elements, name) => elements.map((e) => e.getAttribute(name) ?? ''), attribute);
}

/** A page of the dashboard, watched for problems; `done` closes it and fails on any problem. */
export interface OpenPage {
  readonly page: Page;
  readonly watched: PageWatch;
  done(): Promise<void>;
}

export interface DashboardSuite {
  /** The server's base URL (once the suite's `before` ran). */
  readonly url: string;
  /** A fresh page at `hash` with `collection` selected. */
  open(hash: string, collection: string): Promise<OpenPage>;
}

/**
 * Called in a `describe`: before its tests, a real server (with `load`'s data, sent to its URL)
 * and Chromium; after them, both stopped.
 */
export function dashboardSuite(load: (url: string) => Promise<void>): DashboardSuite {
  let browser: Browser | undefined;
  let server: ServerProcess | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  before(async () => {
    const t = { after: (fn: () => void) => cleanups.push(async () => fn()) };
    const started = await startServer(tempDbPath(t));
    server = started;
    cleanups.unshift(() => started.stop());
    await load(started.url);
    const launched = await launchChromium(chromiumPath as string);
    browser = launched;
    cleanups.unshift(() => launched.close());
  });
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });
  return {
    get url(): string {
      assert.ok(server !== undefined, 'the suite has not started');
      return server.url;
    },
    async open(hash, collection) {
      assert.ok(browser !== undefined && server !== undefined, 'the suite has not started');
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const page = await context.newPage();
      const watched = watch(page);
      await page.goto(`${server.url}/dashboard${hash}`);
      await page.getByTestId('collection-select').selectOption(collection);
      return {
        page,
        watched,
        async done() {
          await context.close();
          assert.deepEqual(watched.problems(), [], `[seed ${seed}] the page had problems`);
        },
      };
    },
  };
}

if (chromiumPath === undefined) console.log(`# dashboard browser tests skipped: ${SKIP_WITHOUT_CHROMIUM}`);
