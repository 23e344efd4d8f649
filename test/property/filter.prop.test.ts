/**
 * Property: for random payloads and random filters, the compiled filter agrees with a naive
 * reference evaluator written straight from the contract's "Filters" section. The reference and
 * the generators live in test/helpers/filter-reference.ts; the reference shares no code with
 * src/payload: its own JSON equality, own key walk, own RFC 3339 parser (BigInt nanoseconds from a
 * civil-date formula), and JS RegExp for a pool of patterns whose meaning is the same in RE2 and
 * in JS.
 *
 * Replay a failure with KITH_SEED=<seed> (the seed is in the test name and in fast-check's report).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compileFilter } from '../../src/payload/filter-compile.js';
import { parseFilter } from '../../src/payload/filter-parse.js';
import { SharedPayloadReader, SharedPayloadWriter } from '../../src/payload/shared-payloads.js';
import { portableFilter, recordPredicate } from '../../src/payload/thread-filter.js';
import { testSeed } from '../helpers/data.js';
import { fieldConditionArb, filterArb, outcomes, payloadArb, qdrantConditionArb, refCondition, refFilter } from '../helpers/filter-reference.js';

const SEED = testSeed(0x6b17f1);
const RUNS = 3000;

test(`compiled filters agree with a naive reference evaluator (seed ${SEED}, ${RUNS} runs)`, (t) => {
  outcomes.clear();
  let matched = 0;
  let evaluated = 0;
  fc.assert(
    fc.property(filterArb(2, { hasId: true }), fc.array(payloadArb, { minLength: 1, maxLength: 4 }), (filter, payloads) => {
      const parsed = parseFilter(filter);
      assert.ok(parsed !== undefined);
      const predicate = compileFilter(parsed);
      for (const [i, payload] of payloads.entries()) {
        // Ids as kith stores them: `p0`… and decimal strings (has_id lists numbers too).
        const id = i % 2 === 0 ? `p${i}` : String(i);
        const expected = refFilter(filter, payload, id);
        assert.equal(predicate(payload, id), expected, `filter ${JSON.stringify(filter)}\npayload ${JSON.stringify(payload)} id ${id}`);
        evaluated++;
        if (expected) matched++;
      }
    }),
    { seed: SEED, numRuns: RUNS },
  );
  t.diagnostic(`matched ${matched} of ${evaluated}; outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`);
  // The generators must make both answers common, overall and for every condition type.
  assert.ok(matched > evaluated * 0.1 && matched < evaluated * 0.9, `${matched} of ${evaluated} matched`);
  const kinds = ['exact', 'any', 'except', 'number range', 'datetime range', 'prefix', 'contains', 'regex'];
  const added = ['values_count', 'is_empty', 'is_null', 'has_id', 'nested', 'text', 'geo_radius', 'geo_bounding_box', 'geo_polygon', 'min_should'];
  for (const kind of [...kinds, ...added]) {
    const o = outcomes.get(kind);
    assert.ok(o !== undefined && o.yes >= 20 && o.no >= 20, `${kind}: ${JSON.stringify(o)}`);
  }
});

test(`single conditions agree with the reference on every payload (seed ${SEED + 1})`, () => {
  fc.assert(
    fc.property(fc.oneof(fieldConditionArb, qdrantConditionArb), fc.array(payloadArb, { minLength: 1, maxLength: 6 }), (condition, payloads) => {
      const parsed = parseFilter({ must: [condition] });
      assert.ok(parsed !== undefined);
      const inMust = compileFilter(parsed);
      const inMustNot = compileFilter(parseFilter({ must_not: [condition] }) ?? { must: [], mustNot: [], should: [] });
      for (const payload of payloads) {
        const expected = refCondition(condition, payload);
        const context = `condition ${JSON.stringify(condition)}\npayload ${JSON.stringify(payload)}`;
        assert.equal(inMust(payload, 'p'), expected, context);
        assert.equal(inMustNot(payload, 'p'), !expected, context);
      }
    }),
    { seed: SEED + 1, numRuns: 2000 },
  );
});

test(`filters as search threads run them (sent as data, on shared payload records) agree with the reference (seed ${SEED + 2})`, () => {
  fc.assert(
    fc.property(filterArb(2, { hasId: true }), fc.array(payloadArb, { minLength: 1, maxLength: 4 }), (filter, payloads) => {
      const parsed = parseFilter(filter);
      assert.ok(parsed !== undefined);
      const writer = new SharedPayloadWriter();
      const ids = payloads.map((_, i) => (i % 2 === 0 ? `p${i}` : String(i)));
      payloads.forEach((payload, slot) => {
        writer.set(slot, ids[slot] as string, payload);
      });
      // What crosses to a thread: a structured clone of the filter and of the shared arrays.
      const [sent, arrays] = structuredClone([portableFilter(parsed), writer.arrays()]);
      const accept = recordPredicate(new SharedPayloadReader(arrays), sent);
      payloads.forEach((payload, slot) => {
        const expected = refFilter(filter, payload, ids[slot]);
        assert.equal(accept(slot), expected, `filter ${JSON.stringify(filter)}\npayload ${JSON.stringify(payload)} id ${ids[slot]}`);
      });
      assert.equal(accept(payloads.length), false, 'a slot without a record');
    }),
    { seed: SEED + 2, numRuns: 1500 },
  );
});
