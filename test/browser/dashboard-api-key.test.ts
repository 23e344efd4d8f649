/**
 * The web dashboard in a real browser on a server started with -api-key: the page's own files
 * load without the key, the page asks for it, says when it is wrong, keeps the right one for the
 * tab (sessionStorage) and sends it as the api-key header on every call. Its own file so that it
 * runs beside dashboard.test.ts. Skips, saying why, only where no Chromium executable exists.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, watch } from '../helpers/browser.js';
import { type ServerProcess, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { DEMO, DEMO_POINTS, loadDashboardData, SMALL } from './dashboard-data.js';
import { attributes, chromiumPath, SKIP_WITHOUT_CHROMIUM, screenshot, seed } from './dashboard-page.js';

const API_KEY = 'dashboard-test-key';

describe('dashboard in Chromium, on a server with an API key', { skip: SKIP_WITHOUT_CHROMIUM }, () => {
  let browser: Browser;
  let server: ServerProcess;
  const cleanups: (() => Promise<unknown>)[] = [];

  before(async () => {
    const t = { after: (fn: () => void) => cleanups.push(async () => fn()) };
    server = await startServer(tempDbPath(t), ['-api-key', API_KEY]);
    cleanups.unshift(() => server.stop());
    await loadDashboardData(server.url, { 'api-key': API_KEY }, seed);
    browser = await launchChromium(chromiumPath as string);
    cleanups.unshift(() => browser.close());
  });
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it('loads without the key, asks for it, keeps it for the tab and sends it as the api-key header', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const watched = watch(page);
    const keysSent: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/collections') keysSent.push(request.headers()['api-key']);
    });
    const stopAllowing = watched.allow(401, '/collections');
    await page.goto(`${server.url}/dashboard`);
    const prompt = page.getByTestId('key-prompt');
    await prompt.waitFor();
    await screenshot(page, 'api-key');
    await prompt.locator('input[type="password"]').fill('not-the-key');
    await prompt.locator('button[type="submit"]').click();
    await prompt.getByText('did not accept').waitFor();
    await page.waitForTimeout(200);
    stopAllowing();
    await prompt.locator('input[type="password"]').fill(API_KEY);
    await prompt.locator('button[type="submit"]').click();
    await page.getByTestId('collections-table').waitFor();
    assert.equal(await prompt.count(), 0);
    assert.deepEqual(await attributes(page, '[data-collection]', 'data-collection'), [DEMO, SMALL]);
    assert.deepEqual(keysSent, [undefined, 'not-the-key', API_KEY]);
    const stored = await page.evaluate(() =>
      (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('kith.apiKey'),
    );
    assert.equal(stored, API_KEY);
    // A reload keeps the key (same tab): no prompt, and searches (POST) carry it too.
    await page.goto(`${server.url}/dashboard#/points`);
    await page.getByTestId('points-range').getByText(`of ${DEMO_POINTS}`, { exact: false }).waitFor();
    assert.equal(await page.getByTestId('key-prompt').count(), 0);
    assert.equal(keysSent.at(-1), API_KEY);
    await context.close();
    assert.deepEqual(watched.problems(), [], `[seed ${seed}] the page had problems`);
  });
});
