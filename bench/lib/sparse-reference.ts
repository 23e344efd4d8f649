/**
 * The exact reference for the sparse benchmark: a brute-force scan of every document (no inverted
 * index), each scored against the query by a merge join over its sorted terms, with idf computed
 * here from its own document-frequency counts. It sums in float64 in ascending index order, as the
 * index does, so equal answers mean equal slots AND equal scores; ties go to the lower slot.
 */
import { idf } from '../../src/index/sparse/sparse-index.js';
import type { SparseVector } from '../../src/index/sparse/sparse-vector.js';
import type { Corpus } from './sparse-corpus.js';

export class ReferenceScan {
  /** Document frequency per index (a Map: indices may be large). */
  private readonly df = new Map<number, number>();
  private readonly docs: number;

  constructor(private readonly corpus: Corpus) {
    this.docs = corpus.offsets.length - 1;
    for (const index of corpus.indices) this.df.set(index, (this.df.get(index) ?? 0) + 1);
  }

  /** N: documents with at least one term. */
  get nonEmpty(): number {
    let n = 0;
    for (let d = 0; d < this.docs; d++) if ((this.corpus.offsets[d + 1] as number) > (this.corpus.offsets[d] as number)) n++;
    return n;
  }

  weighted(query: SparseVector, n: number): Float32Array {
    return Float32Array.from(query.indices, (index, i) => (query.values[i] as number) * idf(n, this.df.get(index) ?? 0));
  }

  /** Top k over every document passing `pass` (all when absent): slots best first, and their scores. */
  search(query: SparseVector, weights: Float32Array, k: number, pass?: Uint8Array): { slots: number[]; scores: number[] } {
    const { offsets, indices, values } = this.corpus;
    const qi = query.indices;
    const qn = qi.length;
    const slots: number[] = [];
    const scores: number[] = [];
    for (let d = 0; d < this.docs; d++) {
      if (pass !== undefined && pass[d] === 0) continue;
      let i = offsets[d] as number;
      const end = offsets[d + 1] as number;
      let j = 0;
      let sum = 0;
      let overlap = false;
      while (i < end && j < qn) {
        const x = indices[i] as number;
        const y = qi[j] as number;
        if (x < y) i++;
        else if (x > y) j++;
        else {
          sum += (weights[j++] as number) * (values[i++] as number);
          overlap = true;
        }
      }
      if (!overlap) continue;
      // Documents come in slot order: an equal score ranks after the ones kept.
      if (slots.length === k && sum <= (scores[k - 1] as number)) continue;
      let at = slots.length;
      while (at > 0 && (scores[at - 1] as number) < sum) at--;
      slots.splice(at, 0, d);
      scores.splice(at, 0, sum);
      if (slots.length > k) {
        slots.pop();
        scores.pop();
      }
    }
    return { slots, scores };
  }
}
