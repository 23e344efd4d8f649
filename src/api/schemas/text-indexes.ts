/** Request and response schemas of a collection's text indexes (GET/PUT/DELETE /collections/{name}/text-indexes…). */
import { Type } from 'typebox';
import { Nullable } from './common.js';

const Length = (what: string) => Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000, description: what }));

/**
 * A field's text index: Qdrant's TextIndexParams (the same object Qdrant's `PUT …/index` takes as
 * `field_schema`); `type` may be left out here. What kith does not implement is refused by name.
 */
export const TextIndexBody = Type.Object(
  {
    type: Nullable(Type.Literal('text')),
    tokenizer: Nullable(
      Type.Union([Type.Literal('word'), Type.Literal('whitespace'), Type.Literal('prefix'), Type.Literal('multilingual')], {
        default: 'word',
        description:
          'word: split on what is neither a letter nor a number; whitespace: on whitespace; prefix: words, each matching every query word it starts with. multilingual: 400 (not implemented).',
      }),
    ),
    min_token_len: Length('Tokens of fewer characters are dropped (prefix: the shortest prefix indexed).'),
    max_token_len: Length('Tokens of more characters are dropped (prefix: words are indexed and queried cut to this length).'),
    lowercase: Nullable(Type.Boolean({ default: true, description: 'Lowercase every token, on both sides.' })),
    phrase_matching: Nullable(Type.Boolean({ default: false, description: 'Let `match.phrase` match; without it no phrase matches (as in Qdrant).' })),
    stopwords: Nullable(
      Type.Union(
        [
          Type.String({ description: 'A language: english (or en). Others: 400.' }),
          Type.Object(
            {
              languages: Nullable(Type.Array(Type.String())),
              custom: Nullable(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 1_000 })),
            },
            { additionalProperties: false },
          ),
        ],
        { description: 'Tokens dropped: a language name, or {languages, custom}; compared after lowercasing.' },
      ),
    ),
    ascii_folding: Nullable(Type.Boolean({ description: 'true: 400 (not implemented).' })),
    stemmer: Nullable(Type.Unknown({ description: 'Any stemmer: 400 (not implemented).' })),
    on_disk: Nullable(Type.Boolean({ description: 'Accepted; nothing is built.' })),
    enable_hnsw: Nullable(Type.Boolean({ description: 'Accepted; nothing is built.' })),
  },
  { additionalProperties: false, description: 'How `match.text`, `text_any` and `phrase` read this field (docs/filters.md, "Full-text matching").' },
);

export const TextIndexParams = Type.Object({
  name: Type.String({ description: 'Collection name.' }),
  field: Type.String({ description: 'Payload key, as filters write it (`a.b`, `items[].name`).' }),
});

export const TextIndexList = Type.Record(Type.String(), Type.Unknown(), { description: 'Declared text indexes: field → its schema as given.' });

export const TextIndexResult = Type.Object({ field: Type.String(), operation: Type.Literal('completed') });
