/**
 * What the dashboard's browser suites share: the Chromium to drive (or why they skip), the seed of
 * their data, screenshots into docs/images/ (only with KITH_SCREENSHOTS=1, so a test run does not
 * change the tree), and small page readers.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { findChromium } from '../helpers/browser.js';
import { testSeed } from '../helpers/data.js';

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

if (chromiumPath === undefined) console.log(`# dashboard browser tests skipped: ${SKIP_WITHOUT_CHROMIUM}`);
