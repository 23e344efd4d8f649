// Loads the native modules (lmdb, msgpackr-extract) on the Node that runs this, and prints which
// prebuilt binary each took (an ABI-specific build, or the N-API one every newer Node loads).
// Fails if one does not load. CI runs it on each Node release before that release's suite.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('lmdb');
require('msgpackr-extract');
// Linux names every mapped file in /proc/self/maps: the .node files are the loaded binaries.
const binaries = [...new Set(readFileSync('/proc/self/maps', 'utf8').match(/\S+\.node$/gm) ?? [])];
const names = binaries.map((path) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
if (names.length < 2) {
  console.error(`native modules: expected lmdb's and msgpackr-extract's binaries, found ${names.join(', ') || 'none'}`);
  process.exit(1);
}
console.log(`native modules on node ${process.version} (ABI ${process.versions.modules}): ${names.join(', ')}`);
