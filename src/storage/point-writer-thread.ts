/**
 * The thread that commits one large point write (point-writer.ts): opens the database file the
 * way the store does, writes the batch in one synchronous transaction (committed and fsynced when
 * `transactionSync` returns; aborted if anything throws), closes its handle, answers.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type Database, open } from 'lmdb';
import { APPLIED_KEY_PREFIX, ENV_OPTIONS, LAST_VERSIONS_DB, META_DB, POINT_RECORDS_DB } from './lmdb-env.js';
import { type PointWriterJob, type PointWriterResult, unpacked } from './point-writer.js';

const job = workerData as PointWriterJob;
let result: PointWriterResult;
const root = open({ path: job.path, ...ENV_OPTIONS });
try {
  const points: Database<Buffer, Buffer> = root.openDB<Buffer, Buffer>(POINT_RECORDS_DB);
  const lastVersions: Database<string, number> = root.openDB<string, number>(LAST_VERSIONS_DB);
  const meta: Database<unknown, string> = root.openDB<unknown, string>(META_DB);
  root.transactionSync(() => {
    for (let i = 0; i < job.removeKeys.ends.length; i++) points.removeSync(unpacked(job.removeKeys, i));
    for (let i = 0; i < job.putKeys.ends.length; i++) points.putSync(unpacked(job.putKeys, i), unpacked(job.records, i));
    if (job.lastVersion !== null) lastVersions.putSync(job.uid, job.lastVersion);
    if (job.applied !== null) meta.putSync(`${APPLIED_KEY_PREFIX}${job.uid}`, job.applied);
  });
  result = { ok: true };
} catch (error) {
  result = { ok: false, message: error instanceof Error ? error.message : String(error) };
}
await root.close();
parentPort?.postMessage(result);
