/**
 * The dashboard's static files as the service serves them (src/api/routes/dashboard.ts), through
 * a real app over inject(): content types, the CSP and caching headers, served without the API key
 * while the API still asks for it, no file outside the build (path traversal), a clear 503 when
 * the dashboard was not built, and no trace in the OpenAPI document.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerCommon } from '../../src/api/app-common.js';
import { buildApp } from '../../src/api/app.js';
import { DASHBOARD_CSP, DEFAULT_DASHBOARD_ROOT, dashboardFile, dashboardRoutes } from '../../src/api/routes/dashboard.js';
import { Database } from '../../src/db/database.js';
import { tempDbPath, tempDir } from '../helpers/temp-dir.js';

async function appWithKey(t: Parameters<typeof tempDbPath>[0], apiKey?: string): Promise<FastifyInstance> {
  const db = Database.open(tempDbPath(t));
  const app = await buildApp({ db, apiKey });
  t.after(async () => {
    await app.close();
    await db.close();
  });
  return app;
}

/** A bare app with the common hooks and only the dashboard, served from `root`. */
async function dashboardOnly(t: Parameters<typeof tempDbPath>[0], root: string, apiKey?: string): Promise<FastifyInstance> {
  const app = Fastify();
  registerCommon(app, { bodyLimit: 1024, apiKey, dialect: { codes: true } });
  await app.register(dashboardRoutes, { root });
  await app.ready();
  t.after(() => app.close());
  return app;
}

test('the built page and its hashed assets, with their content types, CSP and caching', async (t) => {
  const app = await appWithKey(t);
  const html = readFileSync(join(DEFAULT_DASHBOARD_ROOT, 'index.html'), 'utf8');
  for (const url of ['/dashboard', '/dashboard/', '/dashboard/index.html']) {
    const r = await app.inject({ url });
    assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
    assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(r.headers['content-security-policy'], DASHBOARD_CSP);
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.body, html);
  }
  // Nothing from another origin: every script and style sheet the page names is one of the build's.
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string).filter((u) => u !== 'data:,');
  assert.ok(assets.length >= 2, html);
  for (const asset of assets) {
    assert.match(asset, /^\/dashboard\/assets\/[\w.-]+\.(js|css)$/);
    const r = await app.inject({ url: asset });
    assert.equal(r.statusCode, 200, asset);
    assert.equal(r.headers['content-type'], asset.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.doesNotMatch(r.body, /https?:\/\/(fonts|cdn|unpkg|cdnjs)\./, `${asset} loads nothing from a CDN`);
  }
  assert.doesNotMatch(DASHBOARD_CSP, /unsafe|\*/);
});

test('with an API key the page is served without it; the API still refuses requests without it', async (t) => {
  const app = await appWithKey(t, 'k3y');
  for (const url of ['/dashboard', '/dashboard/']) {
    const r = await app.inject({ url });
    assert.equal(r.statusCode, 200, r.body);
    assert.equal(r.headers['www-authenticate'], undefined);
  }
  const api = await app.inject({ url: '/collections' });
  assert.equal(api.statusCode, 401);
  assert.equal((await app.inject({ url: '/collections', headers: { 'api-key': 'k3y' } })).statusCode, 200);
  // Other paths ending with a slash are still no endpoint.
  assert.equal((await app.inject({ url: '/collections/', headers: { 'api-key': 'k3y' } })).statusCode, 404);
  // An unknown file is a 404 in the error envelope, key or not.
  const missing = await app.inject({ url: '/dashboard/assets/nothing.js' });
  assert.equal(missing.statusCode, 404);
  assert.match(JSON.parse(missing.body).status.error, /no dashboard file "assets\/nothing\.js"/);
});

test('no file outside the build is ever served (path traversal), nor hidden files, links or folders', async (t) => {
  const dir = tempDir(t);
  const root = join(dir, 'dashboard');
  mkdirSync(join(root, 'assets'), { recursive: true });
  mkdirSync(join(root, '.hidden'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>x</title>');
  writeFileSync(join(root, 'assets', 'a-1.js'), 'export {};');
  writeFileSync(join(root, '.hidden', 'x.txt'), 'HIDDEN-CONTENT');
  writeFileSync(join(dir, 'secret.txt'), 'SECRET');
  symlinkSync(join(dir, 'secret.txt'), join(root, 'assets', 'link.txt'));
  const app = await dashboardOnly(t, root);
  assert.equal((await app.inject({ url: '/dashboard/assets/a-1.js' })).statusCode, 200);
  for (const url of [
    '/dashboard/../secret.txt',
    '/dashboard/..%2fsecret.txt',
    '/dashboard/%2e%2e/secret.txt',
    '/dashboard/%2e%2e%2fsecret.txt',
    '/dashboard/assets/..%2f..%2fsecret.txt',
    '/dashboard/assets/%2e%2e/%2e%2e/secret.txt',
    '/dashboard/..%5csecret.txt',
    '/dashboard/%2fetc%2fpasswd',
    '/dashboard//etc/passwd',
    '/dashboard/assets/a-1.js%00.html',
    '/dashboard/.hidden/x.txt',
    '/dashboard/assets/link.txt',
    '/dashboard/assets',
    '/dashboard/assets/',
  ]) {
    const r = await app.inject({ url });
    assert.ok(r.statusCode === 404 || r.statusCode === 400, `${url}: ${r.statusCode}`);
    assert.doesNotMatch(r.body, /SECRET|HIDDEN-CONTENT|root:x/, url);
  }
  assert.equal(dashboardFile(root, '../secret.txt'), undefined);
  assert.equal(dashboardFile(root, 'assets/../../secret.txt'), undefined);
  assert.equal(dashboardFile(root, '/etc/passwd'), undefined);
  assert.equal(dashboardFile(root, 'a\\..\\..\\secret.txt'), undefined);
  assert.equal(dashboardFile(root, 'assets/a-1.js'), join(root, 'assets', 'a-1.js'));
  assert.equal(dashboardFile(root, ''), join(root, 'index.html'));
});

test('without a build, /dashboard answers 503 saying to run npm run build', async (t) => {
  const app = await dashboardOnly(t, join(tempDir(t), 'dashboard'), 'k3y');
  for (const url of ['/dashboard', '/dashboard/', '/dashboard/assets/x.js']) {
    const r = await app.inject({ url });
    assert.equal(r.statusCode, 503, url);
    assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(JSON.parse(r.body).status.error, 'the dashboard is not built: run `npm run build` (it writes dist/dashboard/)');
  }
});

test('the dashboard is not in the OpenAPI document', async (t) => {
  const app = await appWithKey(t);
  const doc = JSON.parse((await app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, unknown> };
  assert.ok(Object.keys(doc.paths).length > 0);
  assert.deepEqual(
    Object.keys(doc.paths).filter((p) => p.startsWith('/dashboard')),
    [],
  );
});
