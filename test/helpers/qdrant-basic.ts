/** The vectors of Qdrant's basic_collection_setup (tests/openapi/helpers/collection_setup.py), points 1–8: its tests' answers are computed on them. */
export const QDRANT_BASIC_VECTORS: readonly (readonly number[])[] = [
  [0.05, 0.61, 0.76, 0.74],
  [0.19, 0.81, 0.75, 0.11],
  [0.36, 0.55, 0.47, 0.94],
  [0.18, 0.01, 0.85, 0.8],
  [0.24, 0.18, 0.22, 0.44],
  [0.35, 0.08, 0.11, 0.44],
  [0.25, 0.98, 0.14, 0.43],
  [0.79, 0.53, 0.72, 0.15],
];
