/**
 * A collection import in a child process (killed by the crash test): opens the database at
 * argv[2] and imports the export file argv[3], telling the parent after each piece of the file it
 * has handed to the import (so the parent can kill it in the middle), then "done".
 */
import { createReadStream } from 'node:fs';
import { Database } from '../../src/db/database.js';

async function* told(path: string): AsyncGenerator<Uint8Array> {
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    yield chunk as Buffer;
    process.send?.('piece');
  }
}

async function main(dbPath: string, exportPath: string): Promise<void> {
  const db = Database.open(dbPath);
  await db.importCollection(told(exportPath));
  await db.close();
  process.send?.('done');
}

if (process.argv[3] !== undefined && process.send !== undefined) void main(process.argv[2] as string, process.argv[3]);
