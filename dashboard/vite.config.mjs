// Vite's build of the dashboard. scripts/build.mjs calls Vite's build() with this file and
// overrides only build.outDir (<out>/dashboard/). Plain .mjs so Vite imports it as it is
// (configLoader 'native') instead of bundling a temporary copy beside it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  // The service serves the build at /dashboard/ (src/api/routes/dashboard.ts); absolute asset
  // URLs work from both /dashboard and /dashboard/.
  base: '/dashboard/',
  // Preact's JSX through esbuild's automatic runtime: no plugin needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  logLevel: 'warn',
  build: {
    emptyOutDir: true,
    target: 'es2022',
    // Everything is a file of its own under assets/, named by content hash: no data: URLs to
    // allow, and the service can cache them for a year.
    assetsInlineLimit: 0,
    // One entry chunk and browsers that support modulepreload natively: no polyfill script.
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
