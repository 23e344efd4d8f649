/** Facets on kith's port (search/facet.ts). */
import { Type } from 'typebox';
import { MAX_FACET_LIMIT } from '../../search/facet-limit.js';
import { FilterRef } from './filter.js';

export const FacetBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024, description: 'The payload key (nested keys with dots, as in filters).' }),
    filter: Type.Optional(Type.Union([FilterRef, Type.Null()])),
    limit: Type.Optional(Type.Union([Type.Null(), Type.Integer({ minimum: 1, maximum: MAX_FACET_LIMIT, description: 'How many values; 10 by default.' })])),
  },
  { additionalProperties: false },
);

export const FacetResult = Type.Array(
  Type.Object({
    value: Type.Union([Type.String(), Type.Integer(), Type.Boolean()], { description: 'A string, whole number or boolean held at the key.' }),
    count: Type.Integer({ description: 'Matching points holding it (each point once).' }),
  }),
  { description: 'The most frequent values, by count, then by value (false, true, numbers, strings; ascending).' },
);
