/**
 * A real Chromium for the dashboard's browser tests, driven by playwright-core (no bundled
 * browser: Debian's `chromium` package, or CHROMIUM_PATH). `findChromium()` is undefined where
 * none is installed, and the suites skip saying so. `watch(page)` records every console error,
 * uncaught page error, failed request and HTTP error answer, so a test can fail on any of them.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

export function findChromium(): string | undefined {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv !== undefined && fromEnv !== '') return existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-extensions',
      '--no-first-run',
      '--mute-audio',
    ],
  });
}

export interface PageWatch {
  /** Every problem seen so far, one line each, but those `allow` excused. */
  problems(): string[];
  /** Excuses HTTP error answers (and Chromium's console line about them) whose URL and status match, until the returned function is called. */
  allow(status: number, urlPart: string): () => void;
}

export function watch(page: Page): PageWatch {
  const seen: { line: string; status?: number; url?: string }[] = [];
  const allowed = new Set<{ status: number; urlPart: string }>();
  const excused = (status: number | undefined, url: string | undefined): boolean =>
    status !== undefined && url !== undefined && [...allowed].some((a) => a.status === status && url.includes(a.urlPart));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every HTTP error answer as "Failed to load resource: … status of 400 (…)".
    const status = /status of (\d{3})/.exec(message.text())?.[1];
    const url = message.location().url;
    if (excused(status === undefined ? undefined : Number(status), url)) return;
    seen.push({ line: `console error: ${message.text()} (${url})` });
  });
  page.on('pageerror', (error) => seen.push({ line: `page error: ${error.message}` }));
  page.on('requestfailed', (request) => seen.push({ line: `request failed: ${request.method()} ${request.url()}: ${request.failure()?.errorText}` }));
  page.on('response', (response) => {
    if (response.status() >= 400 && !excused(response.status(), response.url())) {
      seen.push({ line: `HTTP ${response.status()}: ${response.request().method()} ${response.url()}` });
    }
  });
  return {
    problems: () => seen.map((s) => s.line),
    allow(status, urlPart) {
      const entry = { status, urlPart };
      allowed.add(entry);
      return () => allowed.delete(entry);
    },
  };
}
