// Writes openapi/openapi.json from the route schemas (run after `npm run build`).
// The test suite fails when the committed file differs from what the code generates.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const out = process.env.KITH_DIST ?? 'dist';
const { buildApp } = await import(`../${out}/src/api/app.js`);
const { Database } = await import(`../${out}/src/db/database.js`);
const dir = mkdtempSync(join(tmpdir(), 'kith-openapi-'));
const db = Database.open(join(dir, 'kith.db'));
const app = await buildApp({ db });
const document = app.swagger();
writeFileSync(new URL('../openapi/openapi.json', import.meta.url), `${JSON.stringify(document, null, 2)}\n`);
await app.close();
await db.close();
rmSync(dir, { recursive: true, force: true });
console.log('wrote openapi/openapi.json');
