/** bin/kith's dispatch list (cli/entry.ts) names exactly the program's commands: a missing one would start the service instead. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { buildProgram } from '../../../src/cli/program.js';

test("cli/entry.ts's COMMANDS list is the program's commands and help", () => {
  const source = readFileSync(new URL('../../../../src/cli/entry.ts', import.meta.url), 'utf8');
  const list = /const COMMANDS = \[([^\]]*)\]/.exec(source)?.[1];
  assert.ok(list !== undefined, 'COMMANDS found in entry.ts');
  const listed = [...list.matchAll(/'([^']+)'/g)].map((m) => m[1] as string).sort();
  const commands = [...buildProgram().commands.map((c) => c.name()), 'help'].sort();
  assert.deepEqual(listed, commands);
});
