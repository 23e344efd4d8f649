/**
 * The web dashboard in a real browser (Chromium through playwright-core) against a real server
 * process with data: every page, checked against the API's own answers, with no console error and
 * no failed request (the API key's flow is in dashboard-api-key.test.ts). With KITH_SCREENSHOTS=1 each page is also saved as docs/images/dashboard-*.png.
 * Skips, saying why, only where no Chromium executable exists.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { httpJson } from '../helpers/server-process.js';
import { COLOURS, DEMO, DEMO_POINTS, DIM, loadDashboardData, SMALL } from './dashboard-data.js';
import { attributes, dashboardSuite, SCREENSHOTS, SKIP_WITHOUT_CHROMIUM, screenshot, seed, until } from './dashboard-page.js';

describe('dashboard in Chromium', { skip: SKIP_WITHOUT_CHROMIUM }, () => {
  const suite = dashboardSuite((url) => loadDashboardData(url, {}, seed));
  /** A fresh page at `hash` with `demo` selected, watched for problems (checked by `done`). */
  const open = (hash: string) => suite.open(hash, DEMO);

  it('lists the collections with their info, as GET /collections does', async () => {
    const { page, done } = await open('');
    const api = await httpJson(suite.url, 'GET', '/collections');
    const rows = page.getByTestId('collections-table').locator('tbody tr');
    await rows.first().waitFor();
    assert.deepEqual(
      await attributes(page, '[data-collection]', 'data-collection'),
      api.body.result.map((c: { name: string }) => c.name),
    );
    assert.deepEqual(await attributes(page, '[data-collection]', 'data-collection'), [DEMO, SMALL]);
    await page.locator(`[data-collection="${SMALL}"] button`).click();
    const details = page.getByTestId('collection-details');
    await details.getByText('flat (exact)').waitFor();
    assert.match(await details.innerText(), /points\s+12\b/);
    // Its other vectors, as GET /collections/{name} declares them.
    assert.match(await details.innerText(), /named vector colbert\s+2-d Dot, multi-vector \(max_sim\), exact/);
    assert.match(await details.innerText(), /sparse vector words\s+idf/);
    await page.locator(`[data-collection="${DEMO}"] button`).click();
    await details.getByText('HNSW').waitFor();
    assert.match(await details.innerText(), new RegExp(`points\\s+${DEMO_POINTS}\\b`));
    assert.match(await details.innerText(), /distance\s+Cosine/);
    // HNSW: the default ef and how it was chosen (the collection info's calibration).
    assert.match(await details.innerText(), /default ef\s+\d+ \((uncalibrated|calibrated|fixed)/);
    await screenshot(page, 'collections');
    await done();
  });

  it('browses the points page by page, in id order as the scroll returns them, with payload trees and vector previews', async () => {
    const { page, done } = await open('#/points');
    /** A scroll page of 20 from `cursor`: its ids and the cursor of the page after it. */
    const listing = async (cursor?: string): Promise<{ ids: string[]; next: string | null }> => {
      const r = await httpJson(suite.url, 'POST', `/collections/${DEMO}/points/scroll`, { limit: 20, ...(cursor === undefined ? {} : { cursor }) });
      return { ids: r.body.result.points.map((p: { id: string }) => p.id), next: r.body.result.next_cursor };
    };
    await page.getByTestId('points-range').getByText(`1–20 of ${DEMO_POINTS}`).waitFor();
    const first = await attributes(page, '[data-point-id]', 'data-point-id');
    const firstPage = await listing();
    assert.deepEqual(first, firstPage.ids);
    // A payload is a tree: its nested object opens on a click.
    const row = page.locator(`[data-point-id="${first[0]}"]`);
    assert.equal(await row.locator('svg[aria-label="vector of 8 components"]').count(), 1);
    await row.locator('details.json-node > summary').first().click();
    await row.getByText('maker:').click();
    await row.getByText('country:').waitFor();
    await page.getByTestId('points-next').click();
    await page.getByTestId('points-range').getByText(`21–40 of ${DEMO_POINTS}`).waitFor();
    const second = await attributes(page, '[data-point-id]', 'data-point-id');
    assert.deepEqual(second, (await listing(firstPage.next ?? undefined)).ids);
    assert.equal(new Set([...first, ...second]).size, 40);
    await page.getByTestId('points-prev').click();
    await page.getByTestId('points-range').getByText(`1–20 of ${DEMO_POINTS}`).waitFor();
    assert.deepEqual(await attributes(page, '[data-point-id]', 'data-point-id'), first);
    await done();
  });

  it('runs a filtered search from the playground: the filter is checked as it is typed, the hits and the explain are the API’s', async () => {
    const { page, watched, done } = await open('#/search');
    const status = page.getByTestId('filter-status');
    const filterBox = page.getByTestId('filter-text');
    // Not JSON: refused in the page, before any request.
    await filterBox.fill('{"must": [');
    await page.locator('[data-testid="filter-status"][data-kind="json-error"]').waitFor();
    assert.match(await status.innerText(), /^not JSON/);
    // JSON the server refuses: its 400, naming the field's path.
    const stopAllowing = watched.allow(400, '/points/search');
    await filterBox.fill('{"must": [{"key": "colour", "type": "sounds-like", "match": {"value": "red"}}]}');
    await page.locator('[data-testid="filter-status"][data-kind="server-error"]').waitFor();
    assert.match(await status.innerText(), /400: filter\.must\[0\]/);
    await page.waitForTimeout(200);
    stopAllowing();
    const filter = { must: [{ key: 'colour', type: 'exact', match: { value: 'green' } }], must_not: [{ key: 'size', type: 'range', range: { gte: 50 } }] };
    await filterBox.fill(JSON.stringify(filter, null, 2));
    await page.locator('[data-testid="filter-status"][data-kind="valid"]').waitFor();

    const query = await httpJson(suite.url, 'GET', `/collections/${DEMO}/points/p007`);
    await page.getByTestId('query-id').fill('p007');
    await page.getByTestId('limit').fill('15');
    await page.getByTestId('run-search').click();
    await page.getByTestId('search-results').locator('tbody tr').first().waitFor();

    const api = await httpJson(suite.url, 'POST', `/collections/${DEMO}/points/search`, {
      vector: query.body.result.vector,
      limit: 15,
      filter,
      params: { explain: true },
    });
    assert.equal(api.status, 200, api.raw);
    const expected = api.body.result as { id: string; score: number; payload: { colour: string; size: number } }[];
    assert.ok(expected.length > 0 && expected.every((p) => p.payload.colour === 'green' && p.payload.size < 50), 'the API honours the filter');
    assert.deepEqual(
      await attributes(page, '[data-testid="search-results"] [data-point-id]', 'data-point-id'),
      expected.map((p) => p.id),
    );
    const scores = (await attributes(page, '[data-testid="search-results"] [data-point-id]', 'data-score')).map(Number);
    for (const [i, score] of scores.entries()) assert.ok(Math.abs(score - (expected[i] as { score: number }).score) < 1e-6, `score ${i}`);
    assert.equal(await page.getByTestId('explain-strategy').innerText(), api.body.explain.strategy);
    assert.equal(await page.getByTestId('explain-exact').innerText(), api.body.explain.exact ? 'exact' : 'approximate');
    assert.match(await page.getByTestId('explain-scored').innerText(), /^\d[\d,]*$/);
    // An HNSW collection: the beam width the walk used, and where it came from.
    assert.ok(Number.isInteger(api.body.explain.ef), `ef ${api.body.explain.ef}`);
    assert.match(await page.getByTestId('explain-ef').innerText(), new RegExp(`^ef ${api.body.explain.ef}: (the default|calibrated)`));
    assert.ok((await page.getByTestId('explain-estimate').innerText()).startsWith(api.body.explain.estimate.expected.toLocaleString('en')));
    await screenshot(page, 'search');
    await done();
  });

  it('searches by a pasted vector, exactly: a wrong length is refused in the page, the hits are the API’s exact answer', async () => {
    const { page, done } = await open('#/search');
    await page.getByTestId('mode-vector').check();
    const box = page.getByTestId('query-vector');
    await box.fill('0.5, 1, 2');
    await page.getByTestId('run-search').click();
    await page.getByTestId('search-error').getByText(`the vector has 3 numbers; this collection's vectors have ${DIM}`).waitFor();
    const vector = Array.from({ length: DIM }, (_, i) => (i % 2 === 0 ? 1.5 : -0.25) * (i + 1));
    await box.fill(vector.join(' '));
    await page.getByTestId('exact').check();
    await page.getByTestId('run-search').click();
    await page.getByTestId('search-results').locator('tbody tr').first().waitFor();
    const api = await httpJson(suite.url, 'POST', `/collections/${DEMO}/points/search`, { vector, limit: 10, params: { exact: true, explain: true } });
    assert.equal(api.status, 200, api.raw);
    assert.deepEqual(
      await attributes(page, '[data-testid="search-results"] [data-point-id]', 'data-point-id'),
      api.body.result.map((p: { id: string }) => p.id),
    );
    assert.equal(await page.getByTestId('explain-strategy').innerText(), api.body.explain.strategy);
    assert.equal(await page.getByTestId('explain-exact').innerText(), 'exact');
    assert.equal(await page.getByTestId('explain-scored').innerText(), String(DEMO_POINTS));
    await done();
  });

  it('projects a sample of points on two principal components, coloured by a payload field', async () => {
    const { page, done } = await open('#/projection');
    const canvas = page.getByTestId('projection-canvas');
    await canvas.waitFor();
    assert.equal(await canvas.getAttribute('data-points'), String(DEMO_POINTS));
    // The plot is drawn: many pixels differ from the white background, in more than one colour.
    const drawn = await canvas.evaluate((element) => {
      const c = element as unknown as {
        width: number;
        height: number;
        getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
      };
      const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let painted = 0;
      const colours = new Set<number>();
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b] = [data[i] as number, data[i + 1] as number, data[i + 2] as number];
        if (r < 240 || g < 240 || b < 240) {
          painted++;
          colours.add(((r >> 5) << 6) | ((g >> 5) << 3) | (b >> 5));
        }
      }
      return { painted, colours: colours.size };
    });
    assert.ok(drawn.painted > 2000, `painted pixels: ${drawn.painted}`);
    assert.ok(drawn.colours >= COLOURS.length, `distinct colours: ${drawn.colours}`);
    await page.getByTestId('colour-field').selectOption('colour');
    const legend = page.getByTestId('projection-legend');
    for (const colour of COLOURS) await legend.getByText(`${colour} (${DEMO_POINTS / COLOURS.length})`).waitFor();
    await screenshot(page, 'projection');
    await page.getByTestId('colour-field').selectOption('size');
    await legend.getByText('blue = lowest').waitFor();
    await done();
  });

  it('charts requests per second and latency from /metrics, live', async () => {
    const { page, done } = await open('#/metrics');
    const samples = async (): Promise<number> => Number(await page.getByTestId('chart-qps').getAttribute('data-samples'));
    const peak = async (): Promise<number> => Number(await page.getByTestId('metrics-now').getAttribute('data-peak-search-qps'));
    await until(async () => (await samples()) >= 1, 'a first point on the chart');
    const before = await samples();
    assert.equal(await peak(), 0, 'no search yet');
    // Traffic while the page polls: the next scrape sees it, and the chart gains a point.
    const vector = Array.from({ length: DIM }, () => 1);
    for (let i = 0; i < 60; i++) await httpJson(suite.url, 'POST', `/collections/${DEMO}/points/search`, { vector, limit: 5 });
    await until(async () => (await samples()) > before && (await peak()) > 0, 'a point on the chart with the searches');
    assert.equal(await page.locator('[data-testid="chart-qps"] canvas').count(), 1, 'uPlot drew its canvas');
    assert.equal(await page.locator('[data-testid="chart-latency"] canvas').count(), 1, 'uPlot drew its canvas');
    const text = await page.getByTestId('metrics-gauges').innerText();
    assert.match(text, /collections\s+2/);
    assert.match(text, new RegExp(`points\\s+${DEMO_POINTS + 12}`));
    assert.match(text, /searches by strategy\s+.*graph: \d+/);
    if (SCREENSHOTS) {
      // For the picture only: a few more scrapes under varying traffic, so the charts show a history.
      for (let round = 1; round <= 5; round++) {
        for (let i = 0; i < 15 * round; i++) await httpJson(suite.url, 'POST', `/collections/${DEMO}/points/search`, { vector, limit: 5 });
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
    await screenshot(page, 'metrics');
    await done();
  });
});
