/**
 * Full-text matching: `match.text` (every query token), `match.text_any` (some query token) and
 * `match.phrase` (the query tokens consecutive, in order), answered as Qdrant answers them.
 *
 * A field with a declared text index (its parameters: tokenizer, lowercasing, token lengths,
 * stopwords, phrase matching) is matched on tokens: the query and the field's strings are split
 * by the index's tokenizer, and the point's tokens are those of all its strings at the key (an
 * array's strings pooled, as Qdrant's index pools them). A field without one is matched as Qdrant
 * matches an unindexed field: `text` and `phrase` as a case-sensitive substring of one of its
 * strings, `text_any` as any whitespace-separated part of the query being such a substring.
 *
 * The declarations are the collection's (Collection.declareTextIndex, kept as its `text_index`
 * annotation); the engine binds them into a filter's text conditions (`bindTextIndexes`) before it
 * estimates and compiles it, so a bound filter carries its parameters as plain data, to search
 * threads too. Nothing here reads Node modules.
 */
import { badInput } from '../core/errors.js';
import { childPath } from '../core/field-path.js';
import { describeJson } from '../core/point-id.js';
import type { Filter } from './filter-types.js';
import { mapFilterConditions } from './filter-map.js';
import { isPlainObject } from './json-value.js';
import { STOPWORD_ALIASES, STOPWORDS } from './stopwords.js';

export type Tokenizer = 'word' | 'whitespace' | 'prefix';

/** A text index's parameters, checked and resolved (stopwords as one list). Plain data: it crosses postMessage. */
export interface TextIndexParams {
  readonly tokenizer: Tokenizer;
  /** Lowercase every token (Qdrant's default: true). */
  readonly lowercase: boolean;
  /** Tokens of fewer characters (code points) are dropped; 0: none. */
  readonly minTokenLen: number;
  /** Tokens of more characters are dropped (prefix: cut to this length); 0: no limit. */
  readonly maxTokenLen: number;
  /** Whether `match.phrase` can match: without it, Qdrant's index keeps no token order and no phrase matches. */
  readonly phraseMatching: boolean;
  /** Tokens dropped (lowercased when `lowercase`). */
  readonly stopwords: readonly string[];
}

/** Field key (as a filter writes it) → its text index. */
export type TextIndexes = ReadonlyMap<string, TextIndexParams>;

export const NO_TEXT_INDEXES: TextIndexes = new Map();

export type TextMatch = 'text' | 'text_any' | 'phrase';

const TOKENIZERS = new Set<string>(['word', 'whitespace', 'prefix']);
const TEXT_SCHEMA_KEYS = new Set([
  'type',
  'tokenizer',
  'min_token_len',
  'max_token_len',
  'lowercase',
  'ascii_folding',
  'phrase_matching',
  'stopwords',
  'stemmer',
  'on_disk',
  'enable_hnsw',
]);
/** A custom stopword list's length and one word's length: declarations are small JSON kept with the collection. */
const MAX_CUSTOM_STOPWORDS = 1_000;
const MAX_STOPWORD_LENGTH = 64;
const MAX_TOKEN_LEN_PARAM = 1_000_000;

/**
 * Qdrant's text field schema (`"text"` or `{"type": "text", …}`, TextIndexParams) checked and
 * resolved; errors name `path`. What kith does not implement is refused by name: the
 * `multilingual` tokenizer, `stemmer`, `ascii_folding: true` and stopword languages other than
 * the bundled ones (english).
 */
export function parseTextIndexParams(raw: unknown, path: string): TextIndexParams {
  if (raw === 'text') return resolved({});
  if (!isPlainObject(raw)) throw badInput(path, `expected "text" or a text index object, got ${describeJson(raw)}`);
  if (raw.type !== 'text') throw badInput(childPath(path, 'type'), `expected "text", got ${describeJson(raw.type)}`);
  for (const key of Object.keys(raw)) if (!TEXT_SCHEMA_KEYS.has(key)) throw badInput(childPath(path, key), 'unknown field of a text index');
  const at = (key: string): string => childPath(path, key);
  const tokenizer = raw.tokenizer ?? 'word';
  if (tokenizer === 'multilingual') throw badInput(at('tokenizer'), 'the multilingual tokenizer is not supported by kith (word, whitespace and prefix are)');
  if (typeof tokenizer !== 'string' || !TOKENIZERS.has(tokenizer)) {
    throw badInput(at('tokenizer'), `expected word, whitespace, prefix or multilingual, got ${describeJson(tokenizer)}`);
  }
  if (raw.stemmer !== undefined && raw.stemmer !== null) throw badInput(at('stemmer'), 'stemming is not supported by kith');
  const folding = optionalBool(raw.ascii_folding, at('ascii_folding'));
  if (folding === true) throw badInput(at('ascii_folding'), 'ASCII folding is not supported by kith');
  for (const key of ['on_disk', 'enable_hnsw']) optionalBool(raw[key], at(key));
  const minTokenLen = optionalLength(raw.min_token_len, at('min_token_len'));
  const maxTokenLen = optionalLength(raw.max_token_len, at('max_token_len'));
  const lowercase = optionalBool(raw.lowercase, at('lowercase'));
  const phraseMatching = optionalBool(raw.phrase_matching, at('phrase_matching'));
  return resolved({
    tokenizer: tokenizer as Tokenizer,
    minTokenLen,
    maxTokenLen,
    lowercase,
    phraseMatching,
    stopwords: stopwordsOf(raw.stopwords, at('stopwords'), lowercase ?? true),
  });
}

function resolved(p: Partial<TextIndexParams>): TextIndexParams {
  return {
    tokenizer: p.tokenizer ?? 'word',
    lowercase: p.lowercase ?? true,
    minTokenLen: p.minTokenLen ?? 0,
    maxTokenLen: p.maxTokenLen ?? 0,
    phraseMatching: p.phraseMatching ?? false,
    stopwords: p.stopwords ?? [],
  };
}

function optionalBool(value: unknown, path: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw badInput(path, `expected a boolean, got ${describeJson(value)}`);
  return value;
}

function optionalLength(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TOKEN_LEN_PARAM) {
    throw badInput(path, `expected an integer from 0 to ${MAX_TOKEN_LEN_PARAM}, got ${describeJson(value)}`);
  }
  return value;
}

/** Qdrant's `stopwords`: a language name, or `{languages?: [...], custom?: [...]}`. */
function stopwordsOf(raw: unknown, path: string, lowercase: boolean): string[] {
  if (raw === undefined || raw === null) return [];
  const words = new Set<string>();
  const add = (word: string): void => {
    words.add(lowercase ? word.toLowerCase() : word);
  };
  const addLanguage = (language: unknown, at: string): void => {
    if (typeof language !== 'string') throw badInput(at, `expected a language name, got ${describeJson(language)}`);
    const list = STOPWORDS[STOPWORD_ALIASES[language] ?? language];
    if (list === undefined) {
      throw badInput(at, `stopwords of ${JSON.stringify(language)} are not supported by kith (supported: ${Object.keys(STOPWORDS).join(', ')})`);
    }
    for (const word of list) add(word);
  };
  if (typeof raw === 'string') {
    addLanguage(raw, path);
    return [...words];
  }
  if (!isPlainObject(raw)) throw badInput(path, `expected a language name or {languages, custom}, got ${describeJson(raw)}`);
  for (const key of Object.keys(raw)) if (key !== 'languages' && key !== 'custom') throw badInput(childPath(path, key), 'unknown field of stopwords');
  const lists = { languages: raw.languages ?? [], custom: raw.custom ?? [] };
  for (const [key, list] of Object.entries(lists)) {
    if (!Array.isArray(list)) throw badInput(childPath(path, key), `expected an array of strings, got ${describeJson(list)}`);
  }
  for (const [i, language] of (lists.languages as unknown[]).entries()) addLanguage(language, childPath(childPath(path, 'languages'), i));
  const custom = lists.custom as unknown[];
  if (custom.length > MAX_CUSTOM_STOPWORDS) throw badInput(childPath(path, 'custom'), `${custom.length} words; the limit is ${MAX_CUSTOM_STOPWORDS}`);
  for (const [i, word] of custom.entries()) {
    if (typeof word !== 'string' || word.length > MAX_STOPWORD_LENGTH) {
      throw badInput(childPath(childPath(path, 'custom'), i), `expected a string of at most ${MAX_STOPWORD_LENGTH} characters, got ${describeJson(word)}`);
    }
    add(word);
  }
  return [...words];
}

// ---------------------------------------------------------------------------------------------
// Tokenizing

/** Runs of characters that are neither letters nor numbers (Unicode's Alphabetic and N*): what the word and prefix tokenizers split on. */
const NOT_ALPHANUMERIC = /[^\p{Alphabetic}\p{N}]+/u;
const WHITESPACE = /\p{White_Space}+/u;

/**
 * The words of a text query, as many as any tokenizer can make of it (runs of letters and
 * numbers, or of non-whitespace): each is checked against every point, like a `match.any` value.
 */
export function queryWords(text: string): number {
  let runs = 0;
  let parts = 0;
  for (const _ of text.matchAll(/[\p{Alphabetic}\p{N}]+/gu)) runs++;
  for (const _ of text.matchAll(/[^\p{White_Space}]+/gu)) parts++;
  return Math.max(runs, parts);
}

/** Characters of a string, counted as code points. */
function charCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The first `n` code points of `s`. */
function firstChars(s: string, n: number): string {
  let end = 0;
  let count = 0;
  for (const c of s) {
    if (count === n) break;
    end += c.length;
    count++;
  }
  return s.slice(0, end);
}

/** A tokenizer bound to its parameters. */
export interface TextAnalyzer {
  /** A stored string's tokens, in order (prefix: each word's prefixes from min_token_len on). */
  document(text: string): string[];
  /** A query's tokens (prefix: each word once, cut to max_token_len, stopwords kept). */
  query(text: string): string[];
}

/** The analyzer of a bound index, and the token sets of the strings it read last. */
interface SharedAnalyzer {
  readonly analyzer: TextAnalyzer;
  /** Token sets of the last point's strings, by string: the conditions of one filter on one field read the same strings in turn. */
  readonly recent: Map<string, ReadonlySet<string>>;
}

/** Per bound index object (one per field in a bound filter, also after a structured clone): its analyzer, shared by the field's conditions. */
const shared = new WeakMap<TextIndexParams, SharedAnalyzer>();
/** Strings whose token sets are kept between conditions (a point's strings at one key). */
const RECENT_STRINGS = 16;

function sharedAnalyzer(params: TextIndexParams): SharedAnalyzer {
  let entry = shared.get(params);
  if (entry === undefined) {
    entry = { analyzer: textAnalyzer(params), recent: new Map() };
    shared.set(params, entry);
  }
  return entry;
}

/** The token set of a stored string, from the field's recent ones when the string was just read. */
function documentTokens(entry: SharedAnalyzer, text: string): ReadonlySet<string> {
  let tokens = entry.recent.get(text);
  if (tokens === undefined) {
    tokens = new Set(entry.analyzer.document(text));
    if (entry.recent.size >= RECENT_STRINGS) entry.recent.clear();
    entry.recent.set(text, tokens);
  }
  return tokens;
}

export function textAnalyzer(params: TextIndexParams): TextAnalyzer {
  const { tokenizer, lowercase, minTokenLen, maxTokenLen } = params;
  const stopwords = new Set(params.stopwords);
  const splitter = tokenizer === 'whitespace' ? WHITESPACE : NOT_ALPHANUMERIC;
  /** The token as the index keeps it, or undefined when it is dropped (empty, a stopword, too short or too long). */
  const processed = (raw: string, checkMax: boolean): string | undefined => {
    if (raw === '') return undefined;
    const token = lowercase ? raw.toLowerCase() : raw;
    if (stopwords.has(token)) return undefined;
    const length = minTokenLen > 0 || (checkMax && maxTokenLen > 0) ? charCount(token) : 0;
    if (length < minTokenLen || (checkMax && maxTokenLen > 0 && length > maxTokenLen)) return undefined;
    return token;
  };
  const plain = (text: string): string[] => {
    const out: string[] = [];
    for (const part of text.split(splitter)) {
      const token = processed(part, true);
      if (token !== undefined) out.push(token);
    }
    return out;
  };
  if (tokenizer !== 'prefix') return { document: plain, query: plain };
  const from = Math.max(1, minTokenLen);
  return {
    document(text) {
      const out: string[] = [];
      for (const part of text.split(splitter)) {
        const word = processed(part, false);
        if (word === undefined) continue;
        const length = charCount(word);
        const upTo = maxTokenLen > 0 ? Math.min(maxTokenLen, length) : length;
        for (let n = from; n < upTo; n++) out.push(firstChars(word, n));
        // The whole word when it fits, else its prefix of max_token_len characters.
        if (upTo >= from) out.push(upTo === length ? word : firstChars(word, upTo));
      }
      return out;
    },
    query(text) {
      const out: string[] = [];
      for (const part of text.split(splitter)) {
        if (part === '') continue;
        const word = lowercase ? part.toLowerCase() : part;
        // A query word is a prefix typed so far: stopwords are kept, and one shorter than any indexed token matches nothing.
        if (minTokenLen > 0 && charCount(word) < minTokenLen) continue;
        out.push(maxTokenLen > 0 ? firstChars(word, maxTokenLen) : word);
      }
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Matching

/**
 * The test of one point's strings at a key (every string value, array elements included, in
 * payload order) for a text condition: with `params`, on the index's tokens; without, as Qdrant's
 * unindexed check (substrings, case-sensitive). No string: no match.
 */
export function textMatcher(match: TextMatch, text: string, params: TextIndexParams | undefined): (strings: readonly string[]) => boolean {
  if (params === undefined) return unindexedMatcher(match, text);
  const entry = sharedAnalyzer(params);
  const analyzer = entry.analyzer;
  if (match === 'phrase') {
    // Qdrant's index keeps token order only with phrase_matching; without it no phrase matches.
    const phrase = analyzer.document(text);
    if (!params.phraseMatching || phrase.length === 0) return () => false;
    return (strings) => hasPhrase(strings, phrase, analyzer);
  }
  const wanted = [...new Set(analyzer.query(text))];
  if (wanted.length === 0) return () => false;
  const all = match === 'text';
  return (strings) => {
    if (strings.length === 0) return false;
    // A point's tokens are those of all its strings together (one string: its own set, shared).
    let tokens = documentTokens(entry, strings[0] as string);
    if (strings.length > 1) {
      const pooled = new Set(tokens);
      for (let i = 1; i < strings.length; i++) for (const t of documentTokens(entry, strings[i] as string)) pooled.add(t);
      tokens = pooled;
    }
    return all ? wanted.every((t) => tokens.has(t)) : wanted.some((t) => tokens.has(t));
  };
}

/** The phrase's tokens appear consecutively within one of the strings (a phrase never spans two array elements). */
function hasPhrase(strings: readonly string[], phrase: readonly string[], analyzer: TextAnalyzer): boolean {
  for (const s of strings) {
    const tokens = analyzer.document(s);
    for (let start = 0; start + phrase.length <= tokens.length; start++) {
      let i = 0;
      while (i < phrase.length && tokens[start + i] === phrase[i]) i++;
      if (i === phrase.length) return true;
    }
  }
  return false;
}

function unindexedMatcher(match: TextMatch, text: string): (strings: readonly string[]) => boolean {
  if (match !== 'text_any') return (strings) => strings.some((s) => s.includes(text));
  const parts = text.split(WHITESPACE).filter((part) => part !== '');
  return (strings) => strings.some((s) => parts.some((part) => s.includes(part)));
}

// ---------------------------------------------------------------------------------------------
// Binding

/**
 * The filter with each text condition on a declared field carrying that field's index; the
 * filter itself when it has none to bind. Inside `nested` (kith's `elements`) a key is read as
 * Qdrant names the field: `outer[].inner`.
 */
export function bindTextIndexes(filter: Filter, indexes: TextIndexes): Filter {
  if (indexes.size === 0) return filter;
  return mapFilterConditions(filter, (condition, prefix) => {
    if (condition.kind !== 'text') return condition;
    const index = indexes.get(prefix + condition.key);
    if (index === condition.index) return condition;
    const { index: _previous, ...rest } = condition;
    return index === undefined ? rest : { ...rest, index };
  });
}
