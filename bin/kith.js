#!/usr/bin/env node
// `npx kith [flags]` (or `kith` once installed): starts the service, as `npm start` does from a clone.
// The compiled entry point reads the flags itself; `kith -help` lists them.
import '../dist/src/main.js';
