/**
 * A synthetic BM25 corpus for the sparse benchmark: documents of Zipf-distributed tokens, weighted
 * as BM25 document weights (Qdrant's BM25 recipe: these weights stored, idf from the collection's
 * `modifier: "idf"` at query time), and queries of distinct terms from the same law, value 1 each.
 *
 * Term of rank r (1 = most frequent) has probability ∝ 1 / r^s. Ranks are shuffled onto index
 * numbers so that frequent terms are not the small indices. Document lengths are uniform in
 * [minLength, maxLength] tokens; a document's vector holds each distinct term once, with weight
 * tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)).
 */
import { SeededRng } from '../../src/core/rng.js';
import type { SparseVector } from '../../src/index/sparse/sparse-vector.js';

export interface CorpusOptions {
  readonly docs: number;
  readonly vocabulary: number;
  readonly exponent: number;
  readonly minLength: number;
  readonly maxLength: number;
  readonly k1: number;
  readonly b: number;
  readonly seed: number;
}

/** Documents in CSR form: document d's terms are indices[offsets[d] … offsets[d+1]), ascending. */
export interface Corpus {
  readonly offsets: Int32Array;
  readonly indices: Uint32Array;
  readonly values: Float32Array;
  readonly avgLength: number;
}

/** Draws term indices from the Zipf law by binary search on the cumulative distribution. */
export class ZipfTerms {
  private readonly cdf: Float64Array;
  private readonly termOfRank: Uint32Array;

  constructor(vocabulary: number, exponent: number, rng: SeededRng) {
    this.cdf = new Float64Array(vocabulary);
    let total = 0;
    for (let r = 0; r < vocabulary; r++) {
      total += 1 / (r + 1) ** exponent;
      this.cdf[r] = total;
    }
    for (let r = 0; r < vocabulary; r++) this.cdf[r] = (this.cdf[r] as number) / total;
    this.termOfRank = new Uint32Array(vocabulary);
    for (let r = 0; r < vocabulary; r++) this.termOfRank[r] = r;
    for (let i = vocabulary - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      const t = this.termOfRank[i] as number;
      this.termOfRank[i] = this.termOfRank[j] as number;
      this.termOfRank[j] = t;
    }
  }

  draw(rng: SeededRng): number {
    const u = rng.next();
    const cdf = this.cdf;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return this.termOfRank[lo] as number;
  }
}

export function generateCorpus(options: CorpusOptions): { corpus: Corpus; terms: ZipfTerms } {
  const rng = new SeededRng(options.seed);
  const terms = new ZipfTerms(options.vocabulary, options.exponent, rng);
  const lengths = new Int32Array(options.docs);
  let totalLength = 0;
  for (let d = 0; d < options.docs; d++) {
    lengths[d] = options.minLength + rng.int(options.maxLength - options.minLength + 1);
    totalLength += lengths[d] as number;
  }
  const avgLength = totalLength / options.docs;
  const offsets = new Int32Array(options.docs + 1);
  let indices = new Uint32Array(totalLength);
  let values = new Float32Array(totalLength);
  let used = 0;
  const tf = new Map<number, number>();
  for (let d = 0; d < options.docs; d++) {
    tf.clear();
    const dl = lengths[d] as number;
    for (let t = 0; t < dl; t++) {
      const term = terms.draw(rng);
      tf.set(term, (tf.get(term) ?? 0) + 1);
    }
    const sorted = [...tf.keys()].sort((a, b) => a - b);
    const norm = options.k1 * (1 - options.b + (options.b * dl) / avgLength);
    for (const term of sorted) {
      const f = tf.get(term) as number;
      indices[used] = term;
      values[used] = (f * (options.k1 + 1)) / (f + norm);
      used++;
    }
    offsets[d + 1] = used;
  }
  indices = indices.slice(0, used);
  values = values.slice(0, used);
  return { corpus: { offsets, indices, values, avgLength }, terms };
}

/** Document d as a SparseVector (views on the corpus arrays, no copy). */
export function documentOf(corpus: Corpus, d: number): SparseVector {
  const from = corpus.offsets[d] as number;
  const to = corpus.offsets[d + 1] as number;
  return { indices: corpus.indices.subarray(from, to), values: corpus.values.subarray(from, to) };
}

/** `count` queries of 2–8 distinct Zipf terms, value 1 each, indices ascending. */
export function generateQueries(terms: ZipfTerms, count: number, seed: number): SparseVector[] {
  const rng = new SeededRng(seed);
  const queries: SparseVector[] = [];
  for (let q = 0; q < count; q++) {
    const want = 2 + rng.int(7);
    const set = new Set<number>();
    while (set.size < want) set.add(terms.draw(rng));
    const indices = Uint32Array.from([...set].sort((a, b) => a - b));
    queries.push({ indices, values: new Float32Array(indices.length).fill(1) });
  }
  return queries;
}
