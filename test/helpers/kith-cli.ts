/**
 * The `kith` command line as a child process, for the CLI suites. It runs the compiled entry of
 * this build (dist-<name>/src/cli/entry.js): bin/kith.js always imports dist/, which another build
 * may not be. Also in a real terminal (tmux), for what only a terminal shows (prompts, Tab).
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, execFileSync, spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from './server-process.js';

export const KITH_JS = fileURLToPath(new URL('../../src/cli/entry.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

const shellWord = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/** The environment of a run: the test's, without its KITH_API_KEY and KITH_URL, plus `env`. */
function cliEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, KITH_API_KEY: '', KITH_URL: '', ...env };
}

export interface KithProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** What it printed on stderr so far. */
  stderr(): string;
  /** Resolves when stderr matches `pattern` (rejects if the process ends first). */
  waitForStderr(pattern: RegExp): Promise<void>;
  /** Its end: the exit code, or the signal that ended it. */
  readonly ended: Promise<CliRun & { signal: NodeJS.Signals | null }>;
}

export interface RunOptions {
  /** Added to the environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Written to stdin (a pipe, never a terminal), which is then closed. */
  readonly input?: string;
  /** The working folder (where the default ./kith.db is). */
  readonly cwd?: string;
}

/** Starts `kith …args` and returns at once (for signals sent mid-way). */
export function startKith(args: readonly string[], options: RunOptions = {}): KithProcess {
  const child = spawn(process.execPath, [KITH_JS, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: cliEnv(options.env), cwd: options.cwd });
  // A command that ends without reading its input is no failure of the test.
  child.stdin.on('error', () => {});
  child.stdin.end(options.input ?? '');
  let stdout = '';
  let stderr = '';
  // Decoded as a stream: a multi-byte character split between two chunks stays one character.
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (stdout += chunk));
  const watchers = new Set<() => void>();
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
    for (const watcher of watchers) watcher();
  });
  const ended = new Promise<CliRun & { signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return {
    child,
    stderr: () => stderr,
    waitForStderr(pattern) {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(stderr)) return;
          watchers.delete(check);
          resolve();
        };
        watchers.add(check);
        check();
        void ended.then(() => reject(new Error(`kith ${args.join(' ')} ended before its stderr matched ${pattern}:\n${stderr}`)));
      });
    },
    ended,
  };
}

/** Runs `kith …args` to its end (stdin empty, not a terminal); KITH_API_KEY and KITH_URL from the test's environment are not passed on. */
export async function kith(args: readonly string[], options?: RunOptions): Promise<CliRun> {
  const { code, stdout, stderr } = await startKith(args, options).ended;
  return { code, stdout, stderr };
}

/** Runs `kith …args`, requires exit 0, returns stdout. */
export async function ok(args: readonly string[], options?: RunOptions): Promise<string> {
  const run = await kith(args, options);
  assert.equal(run.code, 0, `kith ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

/**
 * Runs a command kith printed for the user to run (`kith import … --skip 1000`) through a POSIX
 * shell, as the user would paste it: `kith` is this build's entry.
 */
export function runPrinted(command: string, options: RunOptions = {}): Promise<CliRun> {
  const m = /^((?:[A-Z_]+=\S* )*)kith (.*)$/.exec(command);
  assert.ok(m !== null, `not a kith command: ${command}`);
  const line = `${m[1]}${shellWord(process.execPath)} ${shellWord(KITH_JS)} ${m[2]}`;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', line], { stdio: ['ignore', 'pipe', 'pipe'], env: cliEnv(options.env), cwd: options.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (stdout += chunk));
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Where a command goes: `--db FILE` or `--url URL`, named for assertion messages. */
export interface Where {
  readonly name: string;
  readonly args: readonly string[];
}

/** A database file in `dir` and a server on another file there: a test runs each case against both. */
export async function fileAndServer(t: { after(fn: () => Promise<unknown>): void }, dir: string): Promise<Where[]> {
  const server = await startServer(join(dir, 'served.db'));
  t.after(() => server.stop());
  return [
    { name: '--db', args: ['--db', join(dir, 'kith.db')] },
    { name: '--url', args: ['--url', server.url] },
  ];
}

/** The collections' names, as `kith ls --json` lists them. */
export async function collectionNames(where: Where): Promise<string[]> {
  return JSON.parse(await ok(['ls', '--json', ...where.args])).map((c: { name: string }) => c.name);
}

/** An export's JSON Lines without the versions (which an upsert sets to the time it ran), for comparing points only. */
export function withoutVersions(jsonl: string): string {
  return jsonl.replace(/^\{"id":("(?:[^"\\]|\\.)*"),"version":"\d+",/gm, '{"id":$1,');
}

function tmuxPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).stdout.trim();
  assert.ok(found !== '', 'tmux is required for the kith terminal tests (apt-get install tmux); it is not on PATH');
  return found;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface TerminalOptions {
  readonly env?: Readonly<Record<string, string>>;
  /** Keep the terminal after kith ends, showing `[exit CODE]` (else the session ends with it). */
  readonly showExit?: boolean;
}

/**
 * `kith …args` in a real pseudo-terminal: a detached tmux session on its own server socket, 200×50;
 * the test types with send-keys and reads the screen with capture-pane. tmux is required.
 */
export function startInTerminal(t: { after(fn: () => void): void }, args: readonly string[], options: TerminalOptions = {}) {
  const tmux = tmuxPath();
  const socket = `kith-terminal-test-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const run = (...tmuxArgs: string[]): string => execFileSync(tmux, ['-L', socket, ...tmuxArgs], { encoding: 'utf8' });
  const assignments = Object.entries({ KITH_API_KEY: '', KITH_URL: '', ...options.env }).map(([name, value]) => `${name}=${shellWord(value)}`);
  const kithCommand = `env ${assignments.join(' ')} ${shellWord(process.execPath)} ${shellWord(KITH_JS)} ${args.map(shellWord).join(' ')}`;
  const command = options.showExit === true ? `${kithCommand}; echo "[exit $?]"; sleep 600` : kithCommand;
  run('new-session', '-d', '-x', '200', '-y', '50', command);
  t.after(() => {
    spawnSync(tmux, ['-L', socket, 'kill-server']);
    // kill-server leaves the socket file behind: -L names it in tmux's folder for this user.
    rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
  });
  const alive = (): boolean => spawnSync(tmux, ['-L', socket, 'has-session'], { stdio: 'ignore' }).status === 0;
  return {
    alive,
    screen: (): string => run('capture-pane', '-p', '-J'),
    /** Keys as tmux names them ("Tab", "Enter", "C-d", "Up") or literal text (-l). */
    async keys(...keys: string[]): Promise<void> {
      run('send-keys', ...keys);
      await sleep(150);
    },
    async type(text: string): Promise<void> {
      run('send-keys', '-l', text);
      await sleep(150);
    },
    /** Waits until the last non-empty line of the screen is `line` (capture-pane drops trailing spaces). */
    async waitForLast(line: string, what: string): Promise<void> {
      let last = '';
      for (let i = 0; i < 200; i++) {
        last = alive() ? (run('capture-pane', '-p', '-J').trimEnd().split('\n').at(-1) ?? '') : last;
        if (last === line) return;
        await sleep(50);
      }
      throw new Error(`${what}: the last line is ${JSON.stringify(last)}, not ${JSON.stringify(line)}`);
    },
    async waitFor(pattern: RegExp, what: string): Promise<string> {
      let screen = '';
      for (let i = 0; i < 200; i++) {
        screen = alive() ? run('capture-pane', '-p', '-J') : screen;
        if (pattern.test(screen)) return screen;
        await sleep(50);
      }
      throw new Error(`${what}: ${pattern} not on the screen:\n${screen}`);
    },
    /** Waits (up to 5 s) for the program to end; whether it did. */
    async ended(): Promise<boolean> {
      for (let i = 0; i < 100 && alive(); i++) await sleep(50);
      return !alive();
    },
  };
}
