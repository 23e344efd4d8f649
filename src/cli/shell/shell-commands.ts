/**
 * What the shell's commands do: each takes the words after its name and returns the text to
 * print (tables for lists and hits, JSON for one point). Wrong arguments throw ShellUsage, which the
 * shell prints with the command's usage line and goes on.
 */
import { parseJson } from '../../core/json-text.js';
import type { Target } from '../target.js';
import { table, toJson } from '../output.js';

export class ShellUsage extends Error {
  override readonly name = 'ShellUsage';
}

/**
 * Asks the person at the shell a yes/no question; undefined when the shell reads a pipe or a file,
 * where no one can answer.
 */
export type Ask = ((question: string) => Promise<boolean>) | undefined;

interface ShellCommand {
  readonly usage: string;
  readonly help: string;
  /** Whether the first argument is a collection name (for completion). */
  readonly takesCollection: boolean;
  run(target: Target, args: string[], ask: Ask): Promise<string>;
}

function json(text: string | undefined, what: string): unknown {
  if (text === undefined) throw new ShellUsage(`${what}: missing`);
  try {
    return parseJson(text);
  } catch (error) {
    throw new ShellUsage(`${what}: not valid JSON (${(error as Error).message})`);
  }
}

/** `--name value` pairs out of the arguments; the rest stay positional. */
function options(args: string[], known: readonly string[], flags: readonly string[] = []): { positional: string[]; values: Map<string, string> } {
  const positional: string[] = [];
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (word.startsWith('--')) {
      const name = word.slice(2);
      if (flags.includes(name)) {
        values.set(name, 'true');
        continue;
      }
      if (!known.includes(name)) throw new ShellUsage(`unknown option ${word}`);
      const value = args[i + 1];
      if (value === undefined) throw new ShellUsage(`${word}: missing value`);
      values.set(name, value);
      i++;
      continue;
    }
    positional.push(word);
  }
  return { positional, values };
}

function collectionArg(args: readonly string[]): string {
  const name = args[0];
  if (name === undefined) throw new ShellUsage('missing collection name');
  return name;
}

export const SHELL_COMMANDS: Record<string, ShellCommand> = {
  ls: {
    usage: 'ls',
    help: 'the collections: name, dimension, distance, index, points',
    takesCollection: false,
    async run(target) {
      const list = await target.list();
      if (list.length === 0) return 'no collections';
      return table(
        ['NAME', 'DIM', 'DISTANCE', 'INDEX', 'POINTS'],
        list.map((c) => [c.name, String(c.vector_size), c.distance, c.hnsw ? 'hnsw' : 'flat', String(c.points_count)]),
      );
    },
  },
  info: {
    usage: 'info COLLECTION',
    help: "a collection's configuration and point count",
    takesCollection: true,
    async run(target, args) {
      const info = await target.info(collectionArg(args));
      return table(
        ['FIELD', 'VALUE'],
        Object.entries(info).map(([k, v]) => [k, typeof v === 'object' ? toJson(v) : String(v)]),
      );
    },
  },
  count: {
    usage: 'count COLLECTION [FILTER]',
    help: 'how many points (match the filter)',
    takesCollection: true,
    async run(target, args) {
      const name = collectionArg(args);
      const filter = args[1] === undefined ? undefined : json(args[1], 'filter');
      return String(await target.count(name, filter));
    },
  },
  search: {
    usage: 'search COLLECTION VECTOR [--limit N] [--filter FILTER]',
    help: 'the nearest points, best first',
    takesCollection: true,
    async run(target, args) {
      const { positional, values } = options(args, ['limit', 'filter']);
      const name = collectionArg(positional);
      const vector = json(positional[1], 'vector');
      const limit = values.get('limit');
      if (limit !== undefined && !/^[1-9]\d*$/.test(limit)) throw new ShellUsage(`--limit: expected a positive integer, got ${limit}`);
      const filter = values.has('filter') ? json(values.get('filter'), 'filter') : undefined;
      const hits = await target.search(name, { vector, ...(filter === undefined ? {} : { filter }), ...(limit === undefined ? {} : { limit: Number(limit) }) });
      if (hits.length === 0) return 'no hits';
      return table(
        ['ID', 'SCORE', 'PAYLOAD'],
        hits.map((h) => [String(h.id), h.score.toPrecision(6), toJson(h.payload ?? {})]),
      );
    },
  },
  get: {
    usage: 'get COLLECTION ID',
    help: 'one point: id, version, payload, vector',
    takesCollection: true,
    async run(target, args) {
      const id = args[1];
      if (id === undefined) throw new ShellUsage('missing point id');
      const point = await target.get(collectionArg(args), id);
      return table(
        ['FIELD', 'VALUE'],
        [
          ['id', String(point.id)],
          ['version', String(point.version)],
          ['payload', toJson(point.payload)],
          ['vector', toJson(point.vector)],
        ],
        160,
      );
    },
  },
  upsert: {
    usage: 'upsert COLLECTION ID VECTOR [PAYLOAD]',
    help: 'insert or replace one point',
    takesCollection: true,
    async run(target, args) {
      const name = collectionArg(args);
      const id = args[1];
      if (id === undefined) throw new ShellUsage('missing point id');
      const vector = json(args[2], 'vector');
      const payload = args[3] === undefined ? undefined : json(args[3], 'payload');
      if (!Array.isArray(vector)) throw new ShellUsage('vector: expected a JSON array of numbers');
      const pointId = /^(0|[1-9]\d*)$/.test(id) && Number.isSafeInteger(Number(id)) ? Number(id) : id;
      await target.upsert(name, [
        { id: pointId, vector: vector as number[], ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) },
      ]);
      return `upserted ${id}`;
    },
  },
  delete: {
    usage: 'delete COLLECTION (ID… | --filter FILTER)',
    help: 'delete points by id or by filter',
    takesCollection: true,
    async run(target, args) {
      const { positional, values } = options(args, ['filter']);
      const name = collectionArg(positional);
      const ids = positional.slice(1);
      if (ids.length > 0 === values.has('filter')) throw new ShellUsage('give ids or --filter, not both');
      const deleted = values.has('filter') ? await target.deleteByFilter(name, json(values.get('filter'), 'filter')) : await target.deleteIds(name, ids);
      return `deleted ${deleted} point${deleted === 1 ? '' : 's'}`;
    },
  },
  create: {
    usage: 'create COLLECTION DIM [cosine|dot|euclid] [--hnsw]',
    help: 'create a collection',
    takesCollection: false,
    async run(target, args) {
      const { positional, values } = options(args, [], ['hnsw']);
      const name = collectionArg(positional);
      const dim = positional[1];
      if (dim === undefined || !/^[1-9]\d*$/.test(dim)) throw new ShellUsage('DIM: expected a positive integer');
      const info = await target.create({ name, vector_size: Number(dim), distance: positional[2] ?? 'cosine', hnsw: values.has('hnsw') });
      return `created ${info.name} (${info.vector_size}-d ${info.distance}, ${info.hnsw ? 'hnsw' : 'flat'})`;
    },
  },
  drop: {
    usage: 'drop COLLECTION [--yes]',
    help: 'drop a collection and every point in it (asks first; --yes does not)',
    takesCollection: true,
    async run(target, args, ask) {
      const { positional, values } = options(args, [], ['yes']);
      const name = collectionArg(positional);
      if (!values.has('yes')) {
        if (ask === undefined) throw new ShellUsage(`not on a terminal, so no one can confirm: write drop ${name} --yes`);
        const { points_count } = await target.info(name);
        if (!(await ask(`drop collection ${name} and its ${points_count} point${points_count === 1 ? '' : 's'}? [y/N] `))) return `not dropped`;
      }
      await target.drop(name);
      return `dropped ${name}`;
    },
  },
};

/** `help`: every command with its usage, and how arguments are written. */
export function helpText(): string {
  const rows = Object.values(SHELL_COMMANDS).map((c) => [c.usage, c.help]);
  rows.push(['help', 'this list'], ['exit', 'leave the shell (or Ctrl-D)']);
  return `${table(['COMMAND', 'WHAT IT DOES'], rows, 120)}\nJSON arguments may contain spaces: [0.1, 0.2] and {"must": […]} run to their closing bracket; quote other words with spaces.`;
}
