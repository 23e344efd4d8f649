// Style sheets imported for their side effect: Vite bundles them into the build's CSS file.
declare module '*.css';

/**
 * The API types (types.ts) are the server's, so tsc reads the server files they come from, and one
 * of them (src/core/point-id.ts) counts UTF-8 bytes with Node's Buffer. Only that is declared here,
 * not Node's types: dashboard code that used Buffer would type-check, then fail in the browser tests.
 */
declare const Buffer: { byteLength(text: string, encoding: 'utf8'): number };
