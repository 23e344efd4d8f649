/**
 * The real service as a child process (`dist/src/main.js`), listening on a random loopback port.
 * Used by the suites that must cross a real socket: smoke, restart, signals, crash. `startServer`
 * resolves once the database is loaded (GET /readyz 200) unless told to resolve once it listens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN_JS = fileURLToPath(new URL('../../src/main.js', import.meta.url));

export interface ServerProcess {
  readonly url: string;
  readonly process: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code (or signal name). */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

export interface StartOptions {
  /**
   * Resolve as soon as the listener opens (its "Server listening" line) instead of once every
   * collection is loaded (the first 200 from GET /readyz, the default).
   */
  readonly listeningOnly?: boolean;
  /** How long the process may take to listen (default 60 s: a node that loads a large file first needs more). */
  readonly listenTimeoutMs?: number;
}

export async function startServer(dbPath: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}, options: StartOptions = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [MAIN_JS, '-port', '0', '-host', '127.0.0.1', '-db', dbPath, ...extraArgs], {
    env: { ...process.env, KITH_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const listenMs = options.listenTimeoutMs ?? 60_000;
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (m !== null) resolve(m[1] as string);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((code) => reject(new Error(`server exited (${code}) before listening:\n${output}`)));
      setTimeout(() => reject(new Error(`server did not listen within ${listenMs / 1000} s:\n${output}`)), listenMs).unref();
    });
    if (options.listeningOnly !== true) await waitReady(url, () => output);
  } catch (error) {
    // Nobody else holds the process yet: kill it here, or it outlives the caller.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    throw error;
  }
  return {
    url,
    process: child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls GET /readyz (open without an API key) until it answers 200: every collection is loaded. */
export async function waitReady(url: string, output: () => string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${url}/readyz`);
    await response.arrayBuffer();
    if (response.status === 200) return;
    if (performance.now() > deadline) throw new Error(`server not ready within ${timeoutMs} ms:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** JSON over real HTTP. */
export async function httpJson(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
): Promise<{ status: number; body: any; headers: Headers; raw: string }> {
  const response = await fetch(base + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const raw = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, headers: response.headers, raw };
}

/** The Qdrant-dialect listener's address of a process started with -qdrant-port (it logs it after kith's). */
export async function qdrantUrlOf(server: ServerProcess): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const m = /Qdrant API listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(server.output());
    if (m !== null) return m[1] as string;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no Qdrant listener line:\n${server.output()}`);
}

/** `httpJson`, asserting a 200: the parsed body. */
// biome-ignore lint/suspicious/noExplicitAny: test bodies are inspected field by field
export async function httpOk(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await httpJson(base, method, path, body);
  if (answer.status !== 200) throw new Error(`${method} ${base}${path}: ${answer.status} ${answer.raw}`);
  return answer.body;
}
