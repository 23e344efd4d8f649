/**
 * LangChain's QdrantVectorStore (@langchain/qdrant) against the Qdrant port, unchanged: documents
 * in through fromDocuments (UUID ids, content and metadata payloads), similarity search with
 * scores compared with a brute force over the same deterministic embedding, metadata filters, MMR,
 * delete by filter, and the same collection read back through fromExistingCollection; and the
 * README's LangChain example, run as written against the real service.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Document } from '@langchain/core/documents';
import { Embeddings } from '@langchain/core/embeddings';
import { QdrantVectorStore } from '@langchain/qdrant';
import { qdrantUrlOf, startServer } from '../helpers/server-process.js';
import { tempDbPath } from '../helpers/temp-dir.js';
import { http, startQdrant } from './qdrant-harness.js';

/** The repository (dist/test/e2e/ → three folders up). */
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

const DIM = 16;

/** Words hashed into 16 buckets: deterministic, and texts that share words are near. */
function embed(text: string): number[] {
  const v = new Array<number>(DIM).fill(0);
  for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    const at = (h >>> 0) % DIM;
    v[at] = (v[at] as number) + 1;
  }
  v[DIM - 1] = (v[DIM - 1] as number) + 0.25; // no text embeds to the zero vector
  return v;
}

class WordEmbeddings extends Embeddings {
  constructor() {
    super({});
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return texts.map(embed);
  }
  async embedQuery(text: string): Promise<number[]> {
    return embed(text);
  }
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return dot / Math.sqrt(na * nb);
}

const TEXTS = [
  'vector databases answer nearest neighbour queries',
  'graphs of points make search fast',
  'payload filters narrow a search',
  'the quick brown fox jumps over the lazy dog',
  'neighbour graphs need every point reachable',
  'durable writes survive a crash',
  'a crash test kills the server',
  'filters on payload keys use indexes',
  'brown dogs and quick foxes',
  'search results come back best first',
  'nearest points first, ties by id',
  'indexes make filtered search exact when selective',
];

test('LangChain QdrantVectorStore works against the Qdrant port unchanged', async (t) => {
  const { client, kithUrl } = await startQdrant(t);
  const embeddings = new WordEmbeddings();
  const docs = TEXTS.map((text, i) => new Document({ pageContent: text, metadata: { source: i % 3 === 0 ? 'a' : 'b', n: i } }));
  const store = await QdrantVectorStore.fromDocuments(docs, embeddings, { client, collectionName: 'lc' });

  const kithInfo = await http(kithUrl, 'GET', '/collections/lc');
  assert.equal(kithInfo.body.result.points_count, TEXTS.length);
  assert.equal(kithInfo.body.result.distance, 'Cosine');

  const query = 'nearest neighbour search on graphs';
  const exact = TEXTS.map((text, i) => ({ i, score: cosine(embed(query), embed(text)) })).sort((x, y) => y.score - x.score || x.i - y.i);
  const hits = await store.similaritySearchWithScore(query, 4);
  assert.equal(hits.length, 4);
  hits.forEach(([doc, score], rank) => {
    const want = exact[rank] as { i: number; score: number };
    assert.ok(Math.abs(score - want.score) < 1e-5, `rank ${rank}: score ${score}, brute force ${want.score}`);
    assert.equal(doc.pageContent, TEXTS[(doc.metadata as { n: number }).n]);
    assert.match(String(doc.id), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  const filter = { must: [{ key: 'metadata.source', match: { value: 'a' } }] };
  const filtered = await store.similaritySearch(query, 10, filter);
  assert.equal(filtered.length, TEXTS.filter((_, i) => i % 3 === 0).length, 'min(limit, matches)');
  for (const doc of filtered) assert.equal((doc.metadata as { source: string }).source, 'a');

  const mmr = await store.maxMarginalRelevanceSearch(query, { k: 3, fetchK: 8 });
  assert.equal(mmr.length, 3);
  assert.equal(new Set(mmr.map((d) => d.pageContent)).size, 3, 'MMR returns distinct documents');
  assert.equal(mmr[0]?.pageContent, TEXTS[(exact[0] as { i: number }).i], 'MMR picks the most similar first');

  await store.delete({ filter });
  const after = await store.similaritySearch(query, 20);
  assert.equal(after.length, TEXTS.length - filtered.length);
  for (const doc of after) assert.equal((doc.metadata as { source: string }).source, 'b');

  const existing = await QdrantVectorStore.fromExistingCollection(embeddings, { client, collectionName: 'lc' });
  const again = await existing.similaritySearch(query, 2);
  assert.deepEqual(
    again.map((d) => d.pageContent),
    after.slice(0, 2).map((d) => d.pageContent),
  );
});

test("the README's LangChain example runs as written against the service process with -qdrant-port", async (t) => {
  const server = await startServer(tempDbPath(t), ['-qdrant-port', '0']);
  t.after(() => server.stop());
  const qdrantUrl = await qdrantUrlOf(server);
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use it from LangChain\n'));
  const example = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(example !== undefined, 'README has a JavaScript example under "Use it from LangChain"');
  // Written inside the repository so that its imports resolve to the installed packages.
  const file = join(fileURLToPath(new URL('.', import.meta.url)), `readme-langchain-${process.pid}.mjs`);
  writeFileSync(file, example.replace('http://localhost:6333', qdrantUrl));
  t.after(() => rmSync(file, { force: true }));
  const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, 'kith speaks Qdrant\n');
});
