#!/usr/bin/env node
// `npx kith …` (or `kith …` once installed). `kith ls`, `kith import FILE …` and the other commands
// run the command line (docs/cli.md); `kith`, `kith serve [flags]` and `kith -port …` start the
// service, as `npm start` does from a clone. `kith --help` lists both.
import '../dist/src/cli/entry.js';
