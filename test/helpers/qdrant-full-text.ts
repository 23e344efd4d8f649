/** Titles from Qdrant's tests/openapi/test_fts.py (a few of its Asimov stories), by index. */
export const TITLES = [
  '2430 A.D.',
  'The Bicentennial Man',
  'Little Lost Robot',
  'Robot AL-76 Goes Astray',
  'Robot Dreams',
  'Star Light',
  'The Portable Star',
  'Ring Around the Sun',
  'The Last Question',
  "What's in a Name?",
];

/**
 * Qdrant's tests/openapi/test_phrase_matching.py as data: the documents (ids 1…11, field "text",
 * a word index with phrase_matching) and each phrase with the ids it must select.
 */
export const PHRASES = [
  'the quick brown fox jumps over the lazy dog',
  'a quick brown cat runs through the garden',
  'the brown fox is very quick and agile',
  'lazy dogs sleep all day long',
  'machine learning algorithms are powerful tools',
  'natural language processing with transformers',
  'the artificial intelligence revolution',
  'deep learning neural networks',
  'brown sugar and quick oats',
  'New York City is a bustling metropolis',
  'writing tests is very very very important',
];

export const PHRASE_CASES: readonly (readonly [string, readonly number[]])[] = [
  ['quick brown fox', [1]],
  ['quick brown bird', []],
  ['brown quick', []],
  ['quick brown', [1, 2]],
  ['brown', [1, 2, 3, 9]],
  ['machine learning algorithms are powerful tools', [5]],
  ['', []],
  ['very very very', [11]],
  ['very very very very', []],
];
