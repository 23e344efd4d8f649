/**
 * Full-text matching (payload/text-index.ts): each tokenizer and option against hand-derived
 * token lists, the three matches with and without a declared index, Qdrant's own openapi cases
 * (test_phrase_matching.py, test_fts.py), binding, and a seeded comparison of the compiled filter
 * with a plain model of the rules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKithError } from '../../../src/core/errors.js';
import { SeededRng } from '../../../src/core/rng.js';
import { compileFilter } from '../../../src/payload/filter-compile.js';
import { filterToJson } from '../../../src/payload/filter-json.js';
import { parseFilter } from '../../../src/payload/filter-parse.js';
import type { Filter } from '../../../src/payload/filter-types.js';
import { portableFilter, reviveFilter } from '../../../src/payload/thread-filter.js';
import { bindTextIndexes, parseTextIndexParams, type TextIndexParams, textAnalyzer, textMatcher } from '../../../src/payload/text-index.js';
import { testSeed } from '../../helpers/data.js';
import { PHRASE_CASES, PHRASES, TITLES } from '../../helpers/qdrant-full-text.js';

const params = (schema: Record<string, unknown> = {}): TextIndexParams => parseTextIndexParams({ type: 'text', ...schema }, 'field_schema');
const doc = (schema: Record<string, unknown>, text: string): string[] => textAnalyzer(params(schema)).document(text);
const query = (schema: Record<string, unknown>, text: string): string[] => textAnalyzer(params(schema)).query(text);

test('word tokenizer: splits on what is neither a letter nor a number, lowercases by default', () => {
  assert.deepEqual(doc({}, 'Hello, World! Привет, мир! C-3PO x_y 2430 A.D.'), ['hello', 'world', 'привет', 'мир', 'c', '3po', 'x', 'y', '2430', 'a', 'd']);
  assert.deepEqual(doc({ lowercase: false }, 'Hello, World!'), ['Hello', 'World']);
  assert.deepEqual(doc({}, "I'm in Marsport — Without Hilda"), ['i', 'm', 'in', 'marsport', 'without', 'hilda']);
  assert.deepEqual(doc({}, '  ...  '), []);
  // Query side is the same as the document side for word and whitespace.
  assert.deepEqual(query({}, 'Hello, World!'), ['hello', 'world']);
});

test('whitespace tokenizer: splits on whitespace only, punctuation stays in the token', () => {
  assert.deepEqual(doc({ tokenizer: 'whitespace' }, 'Hello, World!\tC-3PO\nA.D.'), ['hello,', 'world!', 'c-3po', 'a.d.']);
  assert.deepEqual(doc({ tokenizer: 'whitespace', lowercase: false }, 'Big  Game'), ['Big', 'Game']);
});

test('prefix tokenizer: a document word gives its prefixes; a query word is one prefix', () => {
  assert.deepEqual(doc({ tokenizer: 'prefix' }, 'Robot AL'), ['r', 'ro', 'rob', 'robo', 'robot', 'a', 'al']);
  assert.deepEqual(doc({ tokenizer: 'prefix', min_token_len: 2, max_token_len: 4 }, 'hello, мир! a'), ['he', 'hel', 'hell', 'ми', 'мир']);
  // max_token_len cuts a query word, min_token_len drops it, stopwords never apply to it.
  assert.deepEqual(query({ tokenizer: 'prefix', max_token_len: 4 }, 'Hello, мир!'), ['hell', 'мир']);
  assert.deepEqual(query({ tokenizer: 'prefix', min_token_len: 3 }, 'ro robo'), ['robo']);
  assert.deepEqual(query({ tokenizer: 'prefix', stopwords: 'english' }, 'the'), ['the']);
  // A stopword document word is dropped with all its prefixes; "theory" is kept.
  assert.deepEqual(doc({ tokenizer: 'prefix', stopwords: 'english', min_token_len: 3 }, 'the theory'), ['the', 'theo', 'theor', 'theory']);
  // min above max: nothing is indexed.
  assert.deepEqual(doc({ tokenizer: 'prefix', min_token_len: 5, max_token_len: 3 }, 'abcdef'), []);
});

test('token lengths count characters (code points), not UTF-16 units', () => {
  assert.deepEqual(doc({ min_token_len: 2, max_token_len: 3 }, 'a bb ccc dddd 𝒳𝒳 é'), ['bb', 'ccc', '𝒳𝒳']);
});

test('stopwords: english (by name or alias), languages plus custom, lowercased with lowercase', () => {
  assert.deepEqual(doc({ stopwords: 'english' }, 'The Robot of the Stars'), ['robot', 'stars']);
  assert.deepEqual(doc({ stopwords: 'en' }, 'The Robot'), ['robot']);
  assert.deepEqual(doc({ stopwords: { languages: ['english'], custom: ['ROBOT'] } }, 'The Robot Stars'), ['stars']);
  // Without lowercasing, a stopword is compared as written.
  assert.deepEqual(doc({ lowercase: false, stopwords: 'english' }, 'The the Robot'), ['The', 'Robot']);
  assert.deepEqual(doc({ lowercase: false, stopwords: { custom: ['Robot'] } }, 'robot Robot'), ['robot']);
});

test('schemas kith does not implement are refused by name', () => {
  const refused = (schema: Record<string, unknown>, pattern: RegExp): void => {
    assert.throws(
      () => params(schema),
      (e: unknown) => isKithError(e) && e.code === 'ERR_BAD_INPUT' && pattern.test(e.message),
      JSON.stringify(schema),
    );
  };
  refused({ tokenizer: 'multilingual' }, /field_schema\.tokenizer: the multilingual tokenizer is not supported/);
  refused({ tokenizer: 'ngram' }, /field_schema\.tokenizer: expected word, whitespace, prefix/);
  refused({ stemmer: { type: 'snowball', language: 'english' } }, /field_schema\.stemmer: stemming is not supported/);
  refused({ ascii_folding: true }, /field_schema\.ascii_folding/);
  refused({ stopwords: 'french' }, /field_schema\.stopwords: stopwords of "french" are not supported by kith \(supported: english\)/);
  refused({ stopwords: { languages: ['english', 'german'] } }, /field_schema\.stopwords\.languages\[1\]: stopwords of "german"/);
  refused({ min_token_len: -1 }, /field_schema\.min_token_len/);
  refused({ lowercase: 'yes' }, /field_schema\.lowercase: expected a boolean/);
  refused({ tokenzier: 'word' }, /field_schema\.tokenzier: unknown field/);
  // Accepted and without effect here: on_disk, enable_hnsw, ascii_folding false.
  assert.equal(params({ on_disk: true, enable_hnsw: false, ascii_folding: false }).tokenizer, 'word');
  assert.deepEqual(parseTextIndexParams('text', 'f'), params({}));
});

test('text: every query token; text_any: some; an empty token list matches nothing', () => {
  const p = params({ stopwords: 'english' });
  const m = (match: 'text' | 'text_any', q: string, strings: string[]): boolean => textMatcher(match, q, p)(strings);
  assert.equal(m('text', 'ROBOT dreams', ['Robot Dreams']), true);
  assert.equal(m('text', 'dreams robot', ['Robot Dreams']), true, 'order does not matter');
  assert.equal(m('text', 'robot star', ['Robot Dreams']), false);
  assert.equal(m('text', 'robo', ['Robot Dreams']), false, 'a word tokenizer matches whole tokens');
  assert.equal(m('text_any', 'robot star', ['Robot Dreams']), true);
  assert.equal(m('text_any', 'of the', ['Robot of the Dreams']), false, 'only stopwords: no token, no match');
  assert.equal(m('text', '', ['anything']), false);
  // An array's strings are pooled, as Qdrant's index pools a point's values.
  assert.equal(m('text', 'robot stars', ['Robot', 'Stars']), true);
  assert.equal(m('text', 'robot', []), false);
});

test('phrase: tokens consecutive and in order, within one string, only with phrase_matching', () => {
  const on = params({ phrase_matching: true });
  const m = (q: string, strings: string[], p = on): boolean => textMatcher('phrase', q, p)(strings);
  assert.equal(m('Quick Brown', ['the quick, brown fox']), true);
  assert.equal(m('brown quick', ['the quick brown fox']), false);
  assert.equal(m('quick fox', ['the quick brown fox']), false);
  assert.equal(m('quick brown', ['the quick', 'brown fox']), false, 'not across array elements');
  assert.equal(m('', ['the quick brown fox']), false);
  assert.equal(m('quick brown', ['the quick brown fox'], params({})), false, 'without phrase_matching no phrase matches');
});

test('without a text index: Qdrant unindexed semantics (case-sensitive substrings)', () => {
  const m = (match: 'text' | 'text_any' | 'phrase', q: string, strings: string[]): boolean => textMatcher(match, q, undefined)(strings);
  assert.equal(m('text', 'obot Dr', ['Robot Dreams']), true);
  assert.equal(m('text', 'robot', ['Robot Dreams']), false);
  assert.equal(m('phrase', 'bot Dre', ['Robot Dreams']), true);
  assert.equal(m('text_any', 'xyz Dre', ['Robot Dreams']), true);
  assert.equal(m('text_any', '', ['Robot Dreams']), false);
  assert.equal(m('text', '', ['Robot Dreams']), true, 'the empty string is a substring of every string');
  assert.equal(m('text', 'a', []), false);
});

/** The ids (1-based: index + 1) of the `docs` (PHRASES unless given) whose `text` passes the filter JSON, with `indexes` bound. */
function selected(filter: unknown, indexes: Map<string, TextIndexParams>, docs = PHRASES): Set<number> {
  const parsed = parseFilter(filter) as Filter;
  const predicate = compileFilter(bindTextIndexes(parsed, indexes));
  return new Set(docs.flatMap((text, i) => (predicate({ text }, String(i + 1)) ? [i + 1] : [])));
}

test("Qdrant's phrase matching cases", () => {
  const indexes = new Map([['text', params({ tokenizer: 'word', phrase_matching: true })]]);
  for (const [phrase, ids] of PHRASE_CASES) {
    assert.deepEqual(selected({ must: [{ key: 'text', match: { phrase } }] }, indexes), new Set(ids), phrase);
  }
});

test("Qdrant's full-text cases: text_any equals a should of texts; prefix ROBO finds three", () => {
  const titles = TITLES;
  const word = new Map([['text', params({ tokenizer: 'word', lowercase: true, stopwords: 'english' })]]);
  const any = selected({ must: [{ key: 'text', match: { text_any: 'robot of the star' } }] }, word, titles);
  const split = selected(
    {
      should: [
        { key: 'text', match: { text: 'robot' } },
        { key: 'text', match: { text: 'star' } },
      ],
    },
    word,
    titles,
  );
  assert.deepEqual(any, split);
  assert.deepEqual(any, new Set([3, 4, 5, 6, 7]));
  const prefix = new Map([['text', params({ tokenizer: 'prefix' })]]);
  assert.deepEqual(selected({ should: [{ key: 'text', match: { text: 'ROBO' } }] }, prefix, titles), new Set([3, 4, 5]));
  // Unbound (no index): a case-sensitive substring, so "ROBO" is nowhere.
  assert.deepEqual(selected({ should: [{ key: 'text', match: { text: 'ROBO' } }] }, new Map(), titles), new Set());
});

test('binding: by key as written, inside nested filters, and as outer[].inner inside elements', () => {
  const p = params({});
  const indexes = new Map([
    ['title', p],
    ['items[].name', p],
  ]);
  const filter = parseFilter({
    must: [{ key: 'title', match: { text: 'x' } }, { key: 'other', match: { text: 'x' } }, { must: [{ key: 'title', match: { text_any: 'y' } }] }],
    should: [{ nested: { key: 'items', filter: { must: [{ key: 'name', match: { phrase: 'z' } }] } } }],
  }) as Filter;
  const bound = bindTextIndexes(filter, indexes);
  const [title, other, nested] = bound.must as unknown as [{ index?: unknown }, { index?: unknown }, { filter: Filter }];
  assert.equal(title.index, p);
  assert.equal(other.index, undefined);
  assert.equal((nested.filter.must[0] as { index?: unknown }).index, p);
  const elements = bound.should[0] as { filter: Filter };
  assert.equal((elements.filter.must[0] as { index?: unknown }).index, p);
  // A bound filter crosses to a search thread as data (structured clone) and matches the same there.
  const onThread = reviveFilter(structuredClone(portableFilter(bound)));
  const payload = { title: 'X marks', items: [{ name: 'z' }] };
  assert.equal(compileFilter(onThread)(payload, '1'), compileFilter(bound)(payload, '1'));
  assert.deepEqual((onThread.must[0] as { index?: unknown }).index, p);
  // Nothing to bind: the same object back. The JSON echo writes the match, not the index.
  assert.equal(bindTextIndexes(filter, new Map()), filter);
  assert.deepEqual(parseFilter(filterToJson(bound)), filter);
});

/**
 * A plain model of the rules for the word tokenizer: tokens are the maximal runs of letters and
 * digits (matched, not split), lowercased unless told, filtered by length and stopwords; a point's
 * tokens are all its strings' together; a phrase is a run of one string's tokens.
 */
function modelTokens(text: string, o: { lowercase: boolean; min: number; max: number; stop: Set<string> }): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[\p{Alphabetic}\p{N}]+/gu)) {
    const t = o.lowercase ? m[0].toLowerCase() : m[0];
    const n = Array.from(t).length;
    if (o.stop.has(t) || n < o.min || (o.max > 0 && n > o.max)) continue;
    out.push(t);
  }
  return out;
}

test('seeded: compiled text filters agree with a plain model', () => {
  const seed = testSeed(20261129);
  const rng = new SeededRng(seed);
  const vocabulary = ['Robot', 'robot', 'ROBOTS', 'star', 'Star', 'the', 'of', 'dréam', 'Ünïcode', 'x', 'ab', '42', 'a1b2', 'Gold'];
  const separators = [' ', ', ', '-', '! ', '  ', '.', '\t'];
  const phrase = (words: number): string => {
    let s = '';
    for (let i = 0; i < words; i++)
      s += (i === 0 ? '' : (separators[rng.int(separators.length)] as string)) + (vocabulary[rng.int(vocabulary.length)] as string);
    return s;
  };
  try {
    for (let round = 0; round < 60; round++) {
      const lowercase = rng.next() < 0.7;
      const min = rng.int(3);
      const max = rng.next() < 0.5 ? 0 : 2 + rng.int(5);
      const stopwords = rng.next() < 0.5 ? undefined : rng.next() < 0.5 ? 'english' : { custom: ['Star', 'x'] };
      const schema: Record<string, unknown> = { lowercase, min_token_len: min, phrase_matching: true, ...(max > 0 ? { max_token_len: max } : {}) };
      if (stopwords !== undefined) schema.stopwords = stopwords;
      const p = params(schema);
      const stop = new Set(p.stopwords);
      const o = { lowercase, min, max, stop };
      const payloads = Array.from({ length: 40 }, () => {
        const r = rng.next();
        return r < 0.1 ? {} : r < 0.3 ? { t: [phrase(1 + rng.int(3)), phrase(1 + rng.int(3)), 7] } : { t: phrase(1 + rng.int(6)) };
      });
      for (const match of ['text', 'text_any', 'phrase'] as const) {
        const q = phrase(1 + rng.int(3));
        const predicate = compileFilter(bindTextIndexes(parseFilter({ must: [{ key: 't', match: { [match]: q } }] }) as Filter, new Map([['t', p]])));
        const wanted = match === 'phrase' ? modelTokens(q, o) : [...new Set(modelTokens(q, o))];
        for (const payload of payloads) {
          const raw = (payload as { t?: unknown }).t;
          const strings = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((v): v is string => typeof v === 'string');
          const docs = strings.map((s) => modelTokens(s, o));
          const pool = new Set(docs.flat());
          let expected: boolean;
          if (wanted.length === 0 || strings.length === 0) expected = false;
          else if (match === 'text') expected = wanted.every((t) => pool.has(t));
          else if (match === 'text_any') expected = wanted.some((t) => pool.has(t));
          else expected = docs.some((d) => windowMatch(d, wanted));
          assert.equal(predicate(payload, '1'), expected, `${match} ${JSON.stringify(q)} on ${JSON.stringify(payload)} with ${JSON.stringify(schema)}`);
        }
      }
    }
  } catch (error) {
    console.error(`text-index property test failed with seed ${seed} (rerun with KITH_SEED=${seed})`);
    throw error;
  }
});

/** `phrase` occurs in `tokens` as a run. */
function windowMatch(tokens: readonly string[], phrase: readonly string[]): boolean {
  return tokens.some((_, i) => phrase.every((t, j) => tokens[i + j] === t));
}
