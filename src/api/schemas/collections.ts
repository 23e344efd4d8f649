/** Request and response schemas of the collection endpoints. */
import { Type } from 'typebox';
import { DEFAULT_PARAMETERS, LIMITS } from '../../collection/collection-config.js';
import { Nullable } from './common.js';

const Parameters = Type.Object(
  {
    m: Type.Optional(
      Type.Integer({ minimum: LIMITS.m.min, maximum: LIMITS.m.max, default: DEFAULT_PARAMETERS.m, description: 'HNSW links per node (2·m on layer 0).' }),
    ),
    ef_construction: Type.Optional(
      Type.Integer({
        minimum: LIMITS.efConstruction.min,
        maximum: LIMITS.efConstruction.max,
        default: DEFAULT_PARAMETERS.efConstruction,
        description: 'HNSW candidate list size while building.',
      }),
    ),
    ef_search: Type.Optional(
      Type.Integer({
        minimum: LIMITS.efSearch.min,
        maximum: LIMITS.efSearch.max,
        default: DEFAULT_PARAMETERS.efSearch,
        description: 'HNSW candidate list size while searching (at least the limit).',
      }),
    ),
    k: Type.Optional(
      Type.Integer({ minimum: LIMITS.k.min, maximum: LIMITS.k.max, default: DEFAULT_PARAMETERS.k, description: 'Default search limit.' }),
    ),
  },
  { additionalProperties: false, description: 'HNSW parameters; echoed even when hnsw is false.' },
);

const Quantization = Type.Union(
  [Type.Literal('none'), Type.Literal('sq8'), Type.Object({ type: Type.Union([Type.Literal('none'), Type.Literal('sq8')]) }, { additionalProperties: false })],
  { description: '"sq8" stores 8-bit codes plus per-vector min/max instead of float32 components.' },
);

export const CreateCollectionBody = Type.Object(
  {
    name: Type.String({ description: '1–255 characters of A-Z a-z 0-9 _ - . (not "." or "..").' }),
    vector_size: Type.Integer({ description: `Dimension, ${LIMITS.vectorSize.min}–${LIMITS.vectorSize.max}.` }),
    distance: Type.String({ description: 'cosine, euclidean (or euclid, l2) or dot; any case.' }),
    hnsw: Nullable(Type.Boolean({ default: false, description: 'Use the HNSW index (default: exact Flat index).' })),
    parameters: Nullable(Parameters),
    quantization: Nullable(Quantization),
    payload_index: Nullable(
      Type.Boolean({
        default: true,
        description: 'Index payload fields automatically (keywords, numbers, booleans, datetimes) for filtered search; false opts out.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CollectionInfoSchema = Type.Object(
  {
    name: Type.String(),
    vector_size: Type.Integer(),
    distance: Type.Union([Type.Literal('Cosine'), Type.Literal('Euclid'), Type.Literal('Dot')]),
    hnsw: Type.Boolean(),
    parameters: Type.Object({ m: Type.Integer(), ef_construction: Type.Integer(), ef_search: Type.Integer(), k: Type.Integer() }),
    quantization: Type.Union([Type.Literal('none'), Type.Literal('sq8')]),
    payload_index: Type.Boolean(),
    points_count: Type.Integer(),
  },
  { description: 'A collection and its configuration.' },
);

export const CreateCollectionResult = Type.Intersect([CollectionInfoSchema, Type.Object({ operation: Type.Literal('completed') })]);

export const DropCollectionResult = Type.Object({ collection: Type.String(), operation: Type.Literal('completed') });
