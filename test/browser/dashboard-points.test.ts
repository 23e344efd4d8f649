/**
 * The points browser and what the dashboard shows of the server's numbers, in a real Chromium
 * against a real server: versions with every digit the server wrote (19-digit nanoseconds, which
 * `JSON.parse` rounds), pages in id order with the scroll's cursors, a filter that narrows and pages the listing, a lookup by id (odd ids
 * included, an unknown id said so), the filter check's estimate for a key no point has (with and
 * without payload indexes), and small-integer labels in categorical colours in the projection.
 * Skips, saying why, only where no Chromium executable exists.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { SeededRng } from '../../src/core/rng.js';
import { httpJson } from '../helpers/server-process.js';
import { attributes, dashboardSuite, SKIP_WITHOUT_CHROMIUM, screenshot, seed, until } from './dashboard-page.js';

const LABELS = 'labels';
const PLAIN = 'plain';
const DIM = 4;
/** Regular points; half of them (`kind` even) match the test's filter: one full page and five more. */
const REGULAR = 50;
/** Ids a URL or a text field can get wrong: spaces, Unicode, slashes, percent signs, dot segments. */
const ODD_IDS = ['with space', ' 7', 'a/b', '100%', '%2F', 'ünïcødé ✓ 😀', 'a/../b', '?x=1#y', '..', '.'];

async function send(base: string, method: string, path: string, body: unknown): Promise<void> {
  const r = await httpJson(base, method, path, body);
  assert.equal(r.status, 200, `${method} ${path}: ${r.raw}`);
}

/** `labels`: regular points labelled 0..9 (`label`) and even/odd (`kind`), plus the odd ids; `plain`: without payload indexes. */
async function load(base: string): Promise<void> {
  const rng = new SeededRng(seed);
  const vector = (): number[] => Array.from({ length: DIM }, () => rng.gaussian());
  await send(base, 'POST', '/collections', { name: LABELS, vector_size: DIM, distance: 'euclid' });
  const regular = Array.from({ length: REGULAR }, (_, i) => ({
    id: `n${String(i).padStart(2, '0')}`,
    vector: vector(),
    payload: { label: i % 10, kind: i % 2 === 0 ? 'even' : 'odd' },
  }));
  const odd = ODD_IDS.map((id, i) => ({ id, vector: vector(), payload: { label: i % 10, kind: 'odd id' } }));
  // In several requests, so the points carry several versions.
  for (const points of [regular.slice(0, 25), regular.slice(25), odd]) await send(base, 'PUT', `/collections/${LABELS}/points`, { points });
  await send(base, 'POST', '/collections', { name: PLAIN, vector_size: DIM, distance: 'euclid', payload_index: false });
  await send(base, 'PUT', `/collections/${PLAIN}/points`, { points: Array.from({ length: 9 }, (_, i) => ({ id: i, vector: vector(), payload: { n: i } })) });
}

/** Id → version digits, read from the JSON text of an answer (never through JSON.parse's doubles). */
function versionsInText(raw: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const match of raw.matchAll(/"id":("(?:[^"\\]|\\.)*"),"version":(-?\d+)/g)) versions.set(JSON.parse(match[1] as string) as string, match[2] as string);
  return versions;
}

/** Id → version as the page shows it, for the rows of the table `testId`. */
async function versionsOnPage(page: Page, testId: string): Promise<Map<string, string>> {
  const rows = await page
    .getByTestId(testId)
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-point-id') ?? '', tr.querySelector('[data-testid="point-version"]')?.textContent ?? '']));
  return new Map(rows as [string, string][]);
}

describe('dashboard points browser in Chromium', { skip: SKIP_WITHOUT_CHROMIUM }, () => {
  const suite = dashboardSuite(load);

  /** The scroll page the browser asks for (20 points from `cursor`), as JSON text and the cursor of the page after it. */
  async function listing(cursor?: string, filter?: unknown): Promise<{ text: string; next: string | null }> {
    const body = { limit: 20, ...(cursor === undefined ? {} : { cursor }), ...(filter === undefined ? {} : { filter }), with_vector: true };
    const response = await fetch(`${suite.url}/collections/${LABELS}/points/scroll`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    const text = await response.text();
    return { text, next: (JSON.parse(text) as { result: { next_cursor: string | null } }).result.next_cursor };
  }
  const listingIds = async (cursor?: string, filter?: unknown): Promise<string[]> => [...versionsInText((await listing(cursor, filter)).text).keys()];

  it('shows versions with every digit the server wrote, in the listing and in a lookup', async () => {
    const { page, done } = await suite.open('#/points', LABELS);
    await page
      .getByTestId('points-range')
      .getByText(`1–20 of ${REGULAR + ODD_IDS.length}`)
      .waitFor();
    const firstPage = await listing();
    const served = versionsInText(firstPage.text);
    const shown = await versionsOnPage(page, 'points-table');
    // In id order: the odd ids that sort before "n00" (a space, "%", ".", digits, "?", "a…") come first.
    assert.deepEqual(
      [...shown.keys()],
      [
        ...ODD_IDS.filter((id) => id < 'n'),
        ...Array.from({ length: 20 - ODD_IDS.filter((id) => id < 'n').length }, (_, i) => `n${String(i).padStart(2, '0')}`),
      ].sort(),
    );
    assert.equal(served.size, 20);
    assert.deepEqual(shown, served, 'the page shows the versions the server wrote');
    // Nanosecond versions are beyond a double's 53 bits: rounding would have changed some of them.
    const roundable = [...served.values()].filter((v) => BigInt(Number(v)) !== BigInt(v));
    assert.ok(roundable.length > 0, `versions a double cannot hold exactly: ${[...served.values()].join(', ')}`);
    // One point by id: its GET answer's text against the page.
    const id = [...served.keys()][0] as string;
    const raw = await (await fetch(`${suite.url}/collections/${LABELS}/points/${encodeURIComponent(id)}`)).text();
    await page.getByTestId('lookup-id').fill(id);
    await page.getByTestId('lookup-run').click();
    await page.getByTestId('lookup-result').waitFor();
    assert.deepEqual(await versionsOnPage(page, 'lookup-result'), versionsInText(raw));
    // Every point once, page by page to the last, as the scroll's cursors lead.
    await page.getByTestId('points-next').click();
    await page
      .getByTestId('points-range')
      .getByText(`21–40 of ${REGULAR + ODD_IDS.length}`)
      .waitFor();
    assert.deepEqual([...(await versionsOnPage(page, 'points-table')).keys()], await listingIds(firstPage.next ?? undefined));
    await page.getByTestId('points-next').click();
    await page
      .getByTestId('points-range')
      .getByText(`41–60 of ${REGULAR + ODD_IDS.length}`)
      .waitFor();
    assert.equal(await page.getByTestId('points-next').isDisabled(), true, 'the last page has no next');
    await done();
  });

  it('looks up a point by id, odd ids included, and says when there is no such point', async () => {
    const { page, watched, done } = await suite.open('#/points', LABELS);
    const box = page.getByTestId('lookup-id');
    for (const id of ODD_IDS) {
      await box.fill(id);
      await page.getByTestId('lookup-run').click();
      const row = page.getByTestId('lookup-result').locator('tbody tr');
      // The row shows the id the server answered with: the point asked for, not one whose id reads alike.
      await until(async () => (await row.count()) === 1 && (await row.getAttribute('data-point-id')) === id, `the lookup of ${JSON.stringify(id)}`);
      assert.equal(await row.getByTestId('point-id').textContent(), id);
    }
    const stopAllowing = watched.allow(404, '/points/');
    for (const id of ['nobody', '7 ', 'with%20space', 'a%2Fb']) {
      await box.fill(id);
      await page.getByTestId('lookup-run').click();
      await page
        .getByTestId('lookup-missing')
        .getByText(`no such point: ${JSON.stringify(id)}`)
        .waitFor();
      assert.equal(await page.getByTestId('lookup-result').count(), 0);
    }
    await page.waitForTimeout(200);
    stopAllowing();
    await done();
  });

  it('pages through only the points a filter matches, as the filtered scroll returns them, and back', async () => {
    const { page, done } = await suite.open('#/points', LABELS);
    const filter = { must: [{ key: 'kind', match: { value: 'even' } }] };
    await page
      .getByTestId('points-range')
      .getByText(`1–20 of ${REGULAR + ODD_IDS.length}`)
      .waitFor();
    await page.getByTestId('filter-text').fill(JSON.stringify(filter));
    const status = page.locator('[data-testid="filter-status"][data-kind="valid"]');
    await status.waitFor();
    assert.equal(await status.innerText(), `valid; ${REGULAR / 2} points match`);
    await page.getByTestId('filter-apply').click();
    await page.getByTestId('points-range').getByText('1–20 of the points matching the filter').waitFor();
    const first = await attributes(page, '[data-testid="points-table"] [data-point-id]', 'data-point-id');
    const firstFiltered = await listing(undefined, filter);
    assert.deepEqual(first, [...versionsInText(firstFiltered.text).keys()]);
    assert.ok(
      first.every((id) => /^n\d\d$/.test(id) && Number(id.slice(1)) % 2 === 0),
      `only even points: ${first.join(', ')}`,
    );
    // Lookup and filter together, for the picture.
    await page.getByTestId('lookup-id').fill('ünïcødé ✓ 😀');
    await page.getByTestId('lookup-run').click();
    await page.getByTestId('lookup-result').waitFor();
    await screenshot(page, 'points');
    await page.getByTestId('lookup-close').click();
    await page.getByTestId('points-next').click();
    await page
      .getByTestId('points-range')
      .getByText(`21–${REGULAR / 2} of the points matching the filter`)
      .waitFor();
    const second = await attributes(page, '[data-testid="points-table"] [data-point-id]', 'data-point-id');
    assert.deepEqual(second, await listingIds(firstFiltered.next ?? undefined, filter));
    assert.equal(new Set([...first, ...second]).size, REGULAR / 2);
    assert.equal(await page.getByTestId('points-next').isDisabled(), true, 'the last page has no next');
    // Back to the first page: it starts where it began.
    await page.getByTestId('points-prev').click();
    await page.getByTestId('points-range').getByText('1–20 of the points matching the filter').waitFor();
    assert.deepEqual(await attributes(page, '[data-testid="points-table"] [data-point-id]', 'data-point-id'), first);
    // Clearing the filter lists every point again, from the start.
    await page.getByTestId('filter-clear').click();
    await page
      .getByTestId('points-range')
      .getByText(`1–20 of ${REGULAR + ODD_IDS.length}`)
      .waitFor();
    assert.deepEqual(await attributes(page, '[data-testid="points-table"] [data-point-id]', 'data-point-id'), await listingIds());
    await done();
  });

  it('the filter check counts a key no point has as 0 matches; without payload indexes it gives a range, not "about"', async () => {
    const absent = JSON.stringify({ must: [{ key: 'colour', match: { value: 'red' } }] });
    const indexed = await suite.open('#/search', LABELS);
    await indexed.page.getByTestId('filter-text').fill(absent);
    const status = (page: Page) => page.locator('[data-testid="filter-status"][data-kind="valid"]');
    await status(indexed.page).waitFor();
    assert.equal(await status(indexed.page).innerText(), 'valid; 0 points match');
    await indexed.done();
    const plain = await suite.open('#/search', PLAIN);
    await plain.page.getByTestId('filter-text').fill(absent);
    await status(plain.page).waitFor();
    assert.equal(await status(plain.page).innerText(), 'valid; the payload indexes cannot count it: between 0 and 9 points match');
    await plain.done();
  });

  it('colours small-integer labels with one palette colour each, not a ramp', async () => {
    const { page, done } = await suite.open('#/projection', LABELS);
    await page.getByTestId('projection-canvas').waitFor();
    await page.getByTestId('colour-field').selectOption('label');
    const legend = page.getByTestId('projection-legend');
    // The first field (kind: even, odd, odd id) gives way to label's legend.
    await until(async () => !(await legend.innerText()).includes('even'), "label's legend");
    const entries = await legend.locator('li').allInnerTexts();
    assert.deepEqual(
      entries.map((e) => e.trim().replace(/ \(\d+\)$/, '')),
      Array.from({ length: 10 }, (_, i) => String(i)),
    );
    const fills = await legend.locator('li circle').evaluateAll((circles) => circles.map((c) => c.getAttribute('fill')));
    assert.equal(new Set(fills).size, 10, 'ten distinct colours');
    await done();
  });
});
