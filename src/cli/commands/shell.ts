/**
 * `kith shell`: an interactive shell on node:readline against a file (--db) or a server (--url).
 * Commands (shell/shell-commands.ts) print tables; Tab completes command names, then collection
 * names; JSON arguments may contain spaces (shell/tokenize.ts). History is kept in ~/.kith_history
 * (or the file KITH_HISTORY names), newest last, at most 1000 lines. `exit`, `quit` or Ctrl-D leave.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { Command } from 'commander';
import { KithClientError } from '../../api/client/kith-client.js';
import { isKithError } from '../../core/errors.js';
import { addTargetOptions, openTarget, type TargetOptions } from '../context.js';
import { isYes } from '../confirm.js';
import { type Ask, helpText, SHELL_COMMANDS, ShellUsage } from '../shell/shell-commands.js';
import { TokenizeError, tokenize } from '../shell/tokenize.js';
import type { Target } from '../target.js';

const HISTORY_SIZE = 1000;
const EXIT_WORDS = ['exit', 'quit'];
const WORDS = [...Object.keys(SHELL_COMMANDS), 'help', ...EXIT_WORDS].sort();

export function historyPath(): string {
  const fromEnv = process.env.KITH_HISTORY;
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : join(homedir(), '.kith_history');
}

function loadHistory(path: string): string[] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-HISTORY_SIZE);
  } catch {
    return [];
  }
}

function describeError(error: unknown): string {
  if (error instanceof ShellUsage || error instanceof TokenizeError) return error.message;
  const code = isKithError(error) || error instanceof KithClientError ? ` [${error.code}]` : '';
  return `${error instanceof Error ? error.message : String(error)}${code}`;
}

/**
 * Tab: command names for the first word; collection names for the second word of a command that
 * takes one. A single match comes with a space after it, as in a shell, ready for the next word.
 */
export function complete(line: string, collections: readonly string[]): [string[], string] {
  const words = line.trimStart().split(/\s+/);
  const matches = (candidates: readonly string[], partial: string): [string[], string] => {
    const found = candidates.filter((c) => c.startsWith(partial));
    return [found.length === 1 ? [`${found[0]} `] : found, partial];
  };
  if (words.length <= 1) return matches(WORDS, words[0] ?? '');
  const command = SHELL_COMMANDS[words[0] as string];
  if (words.length === 2 && command?.takesCollection === true) return matches(collections, words[1] as string);
  return [[], words.at(-1) ?? ''];
}

async function runLine(target: Target, line: string, rl: Interface, ask: Ask): Promise<string | undefined> {
  const words = tokenize(line);
  const [name, ...args] = words;
  if (name === undefined) return undefined;
  if (EXIT_WORDS.includes(name)) {
    rl.close();
    return undefined;
  }
  if (name === 'help') return helpText();
  const command = SHELL_COMMANDS[name];
  if (command === undefined) return `unknown command ${JSON.stringify(name)}; type help for the list`;
  try {
    return await command.run(target, args, ask);
  } catch (error) {
    if (error instanceof ShellUsage) return `${error.message}\nusage: ${command.usage}`;
    throw error;
  }
}

export function registerShellCommand(program: Command): void {
  addTargetOptions(
    program.command('shell').description('an interactive shell: ls, info, count, search, get, upsert, delete, create, drop; help lists them'),
  ).action(async (options: TargetOptions) => {
    const target = openTarget(options);
    try {
      let collections: string[] = [];
      const refresh = async (): Promise<void> => {
        try {
          collections = (await target.list()).map((c) => c.name);
        } catch {
          // Completion goes without names rather than failing the shell.
        }
      };
      await refresh();
      const path = historyPath();
      const interactive = process.stdin.isTTY === true;
      const rl = createInterface({
        input: process.stdin,
        output: process.stdout,
        terminal: interactive,
        // Lines from a pipe or a file run without prompts, so their output is only the results.
        prompt: interactive ? 'kith> ' : '',
        // readline keeps history newest first; the file keeps it oldest first, as shells do.
        history: loadHistory(path).reverse(),
        historySize: HISTORY_SIZE,
        removeHistoryDuplicates: true,
        completer: (line: string) => complete(line, collections),
      });
      let closed = false;
      /** The question being asked (drop), which Ctrl-C or Ctrl-D answers no. */
      let pending: { abort: AbortController; resolve: (yes: boolean) => void } | undefined;
      const settle = (yes: boolean): void => {
        const question = pending;
        pending = undefined;
        question?.abort.abort();
        question?.resolve(yes);
      };
      rl.on('close', () => {
        closed = true;
        settle(false);
      });
      rl.on('SIGINT', () => {
        // Ctrl-C drops the line being typed, as in a shell, or answers no; Ctrl-D (or exit) leaves.
        process.stdout.write('^C\n');
        if (pending !== undefined) {
          settle(false);
          return;
        }
        rl.write(null, { ctrl: true, name: 'u' });
        rl.prompt();
      });
      const ask: Ask = interactive
        ? (question) =>
            new Promise<boolean>((resolve) => {
              const abort = new AbortController();
              pending = { abort, resolve };
              rl.question(question, { signal: abort.signal }, (answer) => {
                pending = undefined;
                resolve(isYes(answer));
              });
            })
        : undefined;
      if (interactive) process.stdout.write(`kith shell on ${target.where}; type help for the commands, exit or Ctrl-D to leave\n`);
      rl.prompt();
      for await (const line of rl) {
        if (line.trim() !== '' && interactive) {
          try {
            appendFileSync(path, `${line.replace(/\n/g, ' ')}\n`);
          } catch {
            // A history file that cannot be written costs the history, not the session.
          }
        }
        try {
          const out = await runLine(target, line, rl, ask);
          if (out !== undefined) process.stdout.write(`${out}\n`);
        } catch (error) {
          process.stdout.write(`error: ${describeError(error)}\n`);
        }
        await refresh();
        if (!closed) rl.prompt();
      }
      if (interactive) {
        // Keep the file to its last HISTORY_SIZE lines.
        const kept = loadHistory(path);
        try {
          writeFileSync(path, kept.length === 0 ? '' : `${kept.join('\n')}\n`);
        } catch {}
        process.stdout.write('\n');
      }
    } finally {
      await target.close();
    }
  });
}
