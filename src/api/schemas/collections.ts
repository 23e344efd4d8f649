/** Request and response schemas of the collection endpoints. */
import { Type } from 'typebox';
import { DEFAULT_PARAMETERS, LIMITS } from '../../segment/collection-config.js';
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
    k: Type.Optional(Type.Integer({ minimum: LIMITS.k.min, maximum: LIMITS.k.max, default: DEFAULT_PARAMETERS.k, description: 'Default search limit.' })),
    target_recall: Type.Optional(
      Type.Number({
        minimum: LIMITS.targetRecall.min,
        maximum: LIMITS.targetRecall.max,
        default: DEFAULT_PARAMETERS.targetRecall,
        description:
          'HNSW without ef_search: searches without params.ef use the smallest ef whose recall@k, measured on the collection’s own points, reaches this (docs/params.md, "Calibrated ef").',
      }),
    ),
  },
  { additionalProperties: false, description: 'HNSW parameters; echoed even when hnsw is false.' },
);

const SparseVectorsConfig = Type.Record(
  Type.String({ minLength: LIMITS.vectorNameLength.min, maxLength: LIMITS.vectorNameLength.max }),
  Type.Object(
    {
      modifier: Nullable(
        Type.Union([Type.Literal('none'), Type.Literal('idf')], {
          description: "idf: query weights are multiplied by each index's inverse document frequency in the collection (BM25-style scoring).",
        }),
      ),
    },
    { additionalProperties: false },
  ),
  {
    maxProperties: LIMITS.sparseVectors.max,
    description: `Sparse vectors by name (at most ${LIMITS.sparseVectors.max}), each searched exactly through its own inverted index (docs/api.md, "Sparse vectors").`,
  },
);

/** A named vector's own graph parameters (the collection's where absent). */
const NamedGraphFields = {
  m: Nullable(
    Type.Integer({
      description: `Its graph's m: 0 (no graph: exact scans) or ${LIMITS.m.min}–${LIMITS.m.max}; absent: the collection's. Only a one-row name in an HNSW collection has a graph.`,
    }),
  ),
  ef_construction: Nullable(
    Type.Integer({ description: `Its graph's ef_construction, ${LIMITS.efConstruction.min}–${LIMITS.efConstruction.max}; absent: the collection's.` }),
  ),
};

const NamedVectorsConfig = Type.Record(
  Type.String({ minLength: LIMITS.vectorNameLength.min, maxLength: LIMITS.vectorNameLength.max }),
  Type.Object(
    {
      size: Type.Integer({ description: `Dimension, ${LIMITS.vectorSize.min}–${LIMITS.vectorSize.max}.` }),
      distance: Type.String({ description: 'cosine, euclidean (or euclid, l2) or dot; any case (a multi-vector: cosine or dot).' }),
      multivector: Nullable(
        Type.Boolean({ default: false, description: "Each point holds 1–1,024 vectors under this name, scored by max_sim (late interaction, ColBERT's)." }),
      ),
      ...NamedGraphFields,
    },
    { additionalProperties: false },
  ),
  {
    maxProperties: LIMITS.namedVectors.max,
    description: `Named dense vectors beside the main one (at most ${LIMITS.namedVectors.max}); in an HNSW collection each plain one has an HNSW graph of its own, multi-vectors are searched exactly (docs/api.md, "Named vectors").`,
  },
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
    vector_name: Nullable(
      Type.String({
        maxLength: LIMITS.vectorNameLength.max,
        description: 'A name for the dense vector (Qdrant\'s named vectors; the Qdrant port shows and takes it by this name); default "", the unnamed vector.',
      }),
    ),
    sparse_vectors: Nullable(SparseVectorsConfig),
    named_vectors: Nullable(NamedVectorsConfig),
  },
  { additionalProperties: false },
);

const CalibrationSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('flat'), Type.Literal('fixed'), Type.Literal('uncalibrated'), Type.Literal('calibrated')], {
      description: 'flat: exact, no ef; fixed: ef_search given at create; uncalibrated: the default ef_search applies; calibrated: the measured ef applies.',
    }),
    running: Type.Boolean({ description: 'A calibration is under way in the background; the current ef applies until it ends.' }),
    ef: Type.Integer({ description: 'The ef a search without params.ef uses (at least offset + limit).' }),
    target_recall: Type.Number(),
    recall: Type.Union([Type.Number(), Type.Null()], {
      description: 'Mean recall@k measured at ef on the sampled points (k: the collection’s default limit).',
    }),
    recall_lower_bound: Type.Union([Type.Number(), Type.Null()], { description: 'One-sided 95% lower confidence bound of that mean.' }),
    reached: Type.Union([Type.Boolean(), Type.Null()], { description: 'Whether the target was reached (else ef is the highest tried, 2048).' }),
    sample: Type.Union([Type.Integer(), Type.Null()], { description: 'Points used as queries.' }),
    points_when_calibrated: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Union([Type.Number(), Type.Null()], { description: 'How long the calibration took.' }),
  },
  { description: 'The default ef and how it was chosen (docs/params.md, "Calibrated ef").' },
);

export const CollectionInfoSchema = Type.Object(
  {
    name: Type.String(),
    vector_size: Type.Integer(),
    distance: Type.Union([Type.Literal('Cosine'), Type.Literal('Euclid'), Type.Literal('Dot')]),
    hnsw: Type.Boolean(),
    parameters: Type.Object({ m: Type.Integer(), ef_construction: Type.Integer(), ef_search: Type.Integer(), k: Type.Integer(), target_recall: Type.Number() }),
    quantization: Type.Union([Type.Literal('none'), Type.Literal('sq8')]),
    payload_index: Type.Boolean(),
    vector_name: Type.Optional(Type.String({ description: 'Only when the dense vector is named.' })),
    sparse_vectors: Type.Optional(
      Type.Record(Type.String(), Type.Object({ modifier: Type.Union([Type.Literal('none'), Type.Literal('idf')]) }), {
        description: 'Only when the collection has sparse vectors.',
      }),
    ),
    named_vectors: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object({
          size: Type.Integer(),
          distance: Type.Union([Type.Literal('Cosine'), Type.Literal('Euclid'), Type.Literal('Dot')]),
          multivector: Type.Boolean(),
          m: Type.Optional(Type.Integer({ description: 'Only when set for this name.' })),
          ef_construction: Type.Optional(Type.Integer({ description: 'Only when set for this name.' })),
        }),
        { description: 'Only when the collection has named dense vectors beside the main one.' },
      ),
    ),
    points_count: Type.Integer(),
    calibration: CalibrationSchema,
  },
  { description: 'A collection and its configuration.' },
);

export const CreateCollectionResult = Type.Intersect([CollectionInfoSchema, Type.Object({ operation: Type.Literal('completed') })]);

/** PATCH /collections/{name}: the index parameters and `hnsw`; a field left out keeps its value. */
export const UpdateCollectionBody = Type.Object(
  {
    parameters: Nullable(Type.Partial(Parameters, { additionalProperties: false, description: 'The parameters to change; the others keep their values.' })),
    hnsw: Nullable(Type.Boolean({ description: 'true: an HNSW graph; false: exact scans (the graph is dropped).' })),
    named_vectors: Nullable(
      Type.Record(Type.String(), Type.Object(NamedGraphFields, { additionalProperties: false }), {
        description: "Named vectors' own graph parameters to change (null: back to the collection's); the others keep theirs.",
      }),
    ),
    sparse_vectors: Nullable(
      Type.Record(
        Type.String(),
        Type.Object({ modifier: Nullable(Type.Union([Type.Literal('none'), Type.Literal('idf')])) }, { additionalProperties: false }),
        { description: "Sparse vectors' modifiers to change (idf is computed at query time: nothing is rebuilt); the others keep theirs." },
      ),
    ),
  },
  { additionalProperties: false },
);

export const DropCollectionResult = Type.Object({ collection: Type.String(), operation: Type.Literal('completed') });
