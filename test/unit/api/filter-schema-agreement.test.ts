/**
 * The filter grammar is written twice: payload/filter-parse.ts judges every request's filter, and
 * api/schemas/filter.ts states it in the OpenAPI document. Random filters, valid and near-valid,
 * go to both (the schema compiled by Ajv with formats, as a client of the document would); they
 * must agree on accept or reject. What JSON Schema cannot say is kept out of the generator and
 * named here: the whole-filter budgets (FILTER_LIMITS: depth, conditions, list values), regexes
 * (RE2 syntax and size), and rules across fields (one test per condition, a ring closed).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { ConditionSchema, FilterSchema } from '../../../src/api/schemas/filter.js';
import { parseFilter } from '../../../src/payload/filter-parse.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ strict: false, allErrors: false }));
ajv.addSchema(ConditionSchema);
ajv.addSchema(FilterSchema);
const validateFilter = ajv.getSchema('Filter') as (value: unknown) => boolean;
/** Where a route takes a filter, null also means "none" (schemas: `Union([FilterRef, Null])`). */
const schemaAccepts = (value: unknown): boolean => value === null || validateFilter(value);

function parserAccepts(value: unknown): boolean {
  try {
    parseFilter(value, 'filter');
    return true;
  } catch {
    return false;
  }
}

const oddJson = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom('', 'x', '2024-01-01T00:00:00Z'),
  fc.constant([]),
  fc.constant({}),
);
const key = fc.oneof({ weight: 8, arbitrary: fc.constantFrom('a', 'b.c', 'list[].x', 'n') }, { weight: 1, arbitrary: oddJson });
const number = fc.oneof(fc.double({ min: -200, max: 200, noNaN: true }), fc.integer({ min: -5, max: 5 }));
const bound = fc.oneof(
  { weight: 4, arbitrary: number },
  { weight: 2, arbitrary: fc.constantFrom('2024-01-01T00:00:00Z', '2024-06-01T12:30:00+02:00') },
  { weight: 1, arbitrary: oddJson },
);
const bounds = (value: fc.Arbitrary<unknown>) =>
  fc
    .record({ gt: value, gte: value, lt: value, lte: value }, { requiredKeys: [] })
    .chain((r) => fc.oneof({ weight: 9, arbitrary: fc.constant(r) }, { weight: 1, arbitrary: fc.constant({ ...r, bad: 1 }) }));
const geoPoint = fc.oneof(
  { weight: 8, arbitrary: fc.record({ lon: fc.oneof(number, oddJson), lat: fc.oneof(number, oddJson) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: oddJson },
);
const matchValue = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean(), fc.constant(null));
const match = fc.oneof(
  fc.record({ value: matchValue }),
  fc.record({ any: fc.array(matchValue, { maxLength: 3 }) }),
  fc.record({ except: fc.array(matchValue, { maxLength: 3 }) }),
  fc.record({ text: fc.oneof(fc.string({ maxLength: 3 }), oddJson) }),
  fc.record({ value: matchValue, any: fc.array(matchValue, { maxLength: 2 }) }),
  fc.constant({}),
  oddJson,
);
const fieldCondition = fc.oneof(
  fc.record({ key, type: fc.constantFrom('exact', 'prefix', 'contains', 'bogus'), match }, { requiredKeys: ['key', 'match'] }),
  fc.record({ key, range: bounds(bound), type: fc.constant('range') }, { requiredKeys: ['key', 'range'] }),
  fc.record({ key, values_count: bounds(fc.oneof(fc.integer({ min: -2, max: 5 }), oddJson)) }),
  fc.record({ key, geo_radius: fc.record({ center: geoPoint, radius: fc.oneof(number, oddJson) }, { requiredKeys: [] }) }),
  fc.record({ key, geo_bounding_box: fc.record({ top_left: geoPoint, bottom_right: geoPoint }, { requiredKeys: [] }) }),
  fc.record({ key, match, range: bounds(bound) }),
  fc.record({ match }),
);
const keyless = fc.oneof(
  fc.record({ is_empty: fc.oneof(fc.record({ key }), oddJson) }),
  fc.record({ is_null: fc.oneof(fc.record({ key }), oddJson) }),
  fc.record({ has_id: fc.oneof(fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer({ min: -2, max: 9 }), oddJson), { maxLength: 3 }), oddJson) }),
);
const { filter } = fc.letrec<{ filter: unknown; condition: unknown; conditions: unknown }>((tie) => ({
  condition: fc.oneof(
    { weight: 5, arbitrary: fieldCondition },
    { weight: 3, arbitrary: keyless },
    { weight: 1, arbitrary: tie('filter') },
    { weight: 1, arbitrary: fc.record({ nested: fc.record({ key, filter: tie('filter') }, { requiredKeys: [] }) }) },
    { weight: 1, arbitrary: oddJson },
  ),
  conditions: fc.oneof(
    { weight: 4, arbitrary: fc.array(tie('condition'), { maxLength: 3 }) },
    { weight: 2, arbitrary: tie('condition') },
    { weight: 1, arbitrary: oddJson },
  ),
  filter: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record(
      {
        must: tie('conditions'),
        must_not: tie('conditions'),
        should: tie('conditions'),
        min_should: fc.oneof(
          fc.record({ conditions: tie('conditions'), min_count: fc.oneof(fc.integer({ min: -1, max: 3 }), oddJson) }, { requiredKeys: [] }),
          oddJson,
        ),
      },
      { requiredKeys: [] },
    ),
    fc.constant({ must: [], unknown: 1 }),
    oddJson,
  ),
}));

describe('the filter schema and the filter parser accept the same language', () => {
  it('agree on random filters, valid and near-valid', () => {
    fc.assert(
      fc.property(filter, (value) => {
        const bySchema = schemaAccepts(value);
        const byParser = parserAccepts(value);
        assert.equal(bySchema, byParser, `schema ${bySchema ? 'accepts' : 'rejects'}, parser ${byParser ? 'accepts' : 'rejects'}: ${JSON.stringify(value)}`);
      }),
      { numRuns: 20000, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
    );
  });
});
