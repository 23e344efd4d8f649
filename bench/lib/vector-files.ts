/**
 * Writes a synthetic vector set as the files `kith import` reads: `.fvecs` (int32 dimension, then
 * float32 components, little-endian, per vector) and JSON Lines (`{"id": i, "vector": […]}`), the
 * same points in both (ids 0…n-1), for the import benchmarks.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

async function writeAll(path: string, chunks: Iterable<string | Uint8Array>): Promise<void> {
  const out = createWriteStream(path);
  for (const chunk of chunks) if (!out.write(chunk)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

export async function writeFvecs(path: string, data: Float32Array, dim: number): Promise<void> {
  const n = data.length / dim;
  function* blocks(): Generator<Uint8Array> {
    const perBlock = 4096;
    for (let start = 0; start < n; start += perBlock) {
      const count = Math.min(perBlock, n - start);
      const block = Buffer.alloc(count * (4 + 4 * dim));
      for (let i = 0; i < count; i++) {
        const at = i * (4 + 4 * dim);
        block.writeInt32LE(dim, at);
        const row = data.subarray((start + i) * dim, (start + i + 1) * dim);
        Buffer.from(row.buffer, row.byteOffset, row.byteLength).copy(block, at + 4);
      }
      yield block;
    }
  }
  await writeAll(path, blocks());
}

export async function writeJsonl(path: string, data: Float32Array, dim: number): Promise<void> {
  const n = data.length / dim;
  function* lines(): Generator<string> {
    for (let start = 0; start < n; start += 1000) {
      let text = '';
      for (let i = start; i < Math.min(n, start + 1000); i++)
        text += `${JSON.stringify({ id: i, vector: Array.from(data.subarray(i * dim, (i + 1) * dim)) })}\n`;
      yield text;
    }
  }
  await writeAll(path, lines());
}
