/**
 * GET /dashboard: the web dashboard's static files (built by `npm run build` from dashboard/ into
 * <out>/dashboard/), read with node:fs. Hidden from the OpenAPI document, which describes the data
 * API; docs/dashboard.md describes the dashboard.
 *
 * The page's own files are public (they ship in the npm package), so they are served without the
 * API key: a browser cannot send a header when it navigates. The page then asks for the key and
 * sends it on every API call. `/dashboard/` is served too, although no other path of the service
 * may end with a slash.
 */
import { lstat, readFile } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { KithError } from '../../core/errors.js';
import { errorBody } from '../envelope.js';

/** The build's folder beside the compiled service: <out>/src/api/routes/ → <out>/dashboard/. */
export const DEFAULT_DASHBOARD_ROOT = fileURLToPath(new URL('../../../dashboard/', import.meta.url));

export interface DashboardOptions {
  /** The built dashboard (index.html and assets/); default DEFAULT_DASHBOARD_ROOT. */
  readonly root?: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Everything the page loads comes from this service: its own scripts and style sheet (no inline
 * script or style element; styles set from script through the CSSOM are allowed by CSP), API calls
 * to the same origin, canvases only. Nothing may frame it, and it posts no forms.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Vite names every file under assets/ by a hash of its content, so a cached copy never goes stale. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The refusals of the app-wide onRequest hooks that do not apply to the page's own files. */
const PUBLIC_FILE_REFUSALS = new Set(['ERR_UNAUTHORIZED', 'ERR_ROUTE_NOT_FOUND']);

/**
 * The file a request names, relative to the build folder, or undefined when it names none the
 * dashboard could have: `..` or `.` segments, hidden files, backslashes or NUL never resolve.
 */
export function dashboardFile(root: string, relative: string): string | undefined {
  const name = relative === '' ? 'index.html' : relative;
  if (name.includes('\0') || name.includes('\\')) return undefined;
  const segments = name.split('/');
  if (segments.some((s) => s === '' || s.startsWith('.'))) return undefined;
  const base = resolve(root);
  const full = resolve(base, ...segments);
  return full.startsWith(base + sep) ? full : undefined;
}

function notFound(reply: FastifyReply, message: string) {
  return reply
    .code(404)
    .type('application/json; charset=utf-8')
    .send(errorBody(reply, message, 'ERR_ROUTE_NOT_FOUND'));
}

export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  const root = options.root ?? DEFAULT_DASHBOARD_ROOT;

  async function serve(relative: string, reply: FastifyReply) {
    const indexStat = await lstat(resolve(root, 'index.html')).catch(() => undefined);
    if (indexStat === undefined) {
      return (
        reply
          .code(503)
          .type('application/json; charset=utf-8')
          // No path in the message: this answer needs no API key, so it tells nothing about the host.
          .send(errorBody(reply, 'the dashboard is not built: run `npm run build` (it writes dist/dashboard/)', 'ERR_UNAVAILABLE'))
      );
    }
    const file = dashboardFile(root, relative);
    // lstat, not stat: only regular files of the build, never a link out of it, nor a folder.
    const stat = file === undefined ? undefined : await lstat(file).catch(() => undefined);
    if (file === undefined || stat === undefined || !stat.isFile()) {
      return notFound(reply, `no dashboard file ${JSON.stringify(relative)}`);
    }
    const body = await readFile(file);
    return reply
      .code(200)
      .type(CONTENT_TYPES[extname(file)] ?? 'application/octet-stream')
      .header('content-security-policy', DASHBOARD_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', relative.startsWith('assets/') ? IMMUTABLE : 'no-cache')
      .send(body);
  }

  const routeOptions = {
    schema: { hide: true },
    // The app-wide onRequest hooks refuse a request without the API key and a path ending with a
    // slash before any handler runs; for the page's files their refusal ends here instead, and the
    // file is served. Any other error goes on to the app's error handler.
    errorHandler(error: unknown, request: { params: unknown }, reply: FastifyReply) {
      if (error instanceof KithError && PUBLIC_FILE_REFUSALS.has(error.code) && !reply.sent) {
        reply.removeHeader('www-authenticate');
        return serve(wildcard(request.params), reply);
      }
      throw error;
    },
  };

  app.get('/dashboard', routeOptions, async (_request, reply) => serve('', reply));
  app.get('/dashboard/*', routeOptions, async (request, reply) => serve(wildcard(request.params), reply));
};

function wildcard(params: unknown): string {
  const value = (params as Record<string, unknown> | undefined)?.['*'];
  return typeof value === 'string' ? value : '';
}
