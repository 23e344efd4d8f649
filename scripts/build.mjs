// Compiles TypeScript to dist/. (The WASM kernels join this step when they land.)
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
execFileSync(process.execPath, [new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname, '-p', 'tsconfig.json'], {
  stdio: 'inherit',
  cwd: new URL('..', import.meta.url),
});
