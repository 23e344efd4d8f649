import assert from 'node:assert/strict';
import { test } from 'node:test';
import { table, toJson } from '../../../src/cli/output.js';
import { checkLine } from '../../../src/cli/readers/jsonl.js';

test('checkLine accepts {id, vector, payload} and names the field of what it refuses', () => {
  assert.deepEqual(checkLine({ id: 7, vector: [1, 2], payload: { a: 1 } }, 2), { id: 7, vector: [1, 2], payload: { a: 1 } });
  assert.deepEqual(checkLine({ id: 'x', vector: [0, -1.5] }, 2), { id: 'x', vector: [0, -1.5] });
  assert.deepEqual(checkLine({ id: 'x', vector: [0, 1], payload: null }, 2), { id: 'x', vector: [0, 1] });
  // A version as kith export writes it (a decimal string up to 2^64 − 1), or a safe integer.
  assert.deepEqual(checkLine({ id: 'x', version: '18446744073709551615', vector: [0, 1] }, 2), { id: 'x', version: '18446744073709551615', vector: [0, 1] });
  assert.deepEqual(checkLine({ id: 'x', version: 42, vector: [0, 1] }, 2), { id: 'x', version: '42', vector: [0, 1] });
  const refused: [unknown, string][] = [
    [[1], 'expected an object {"id", "vector", "payload"}, got an array'],
    [{ vector: [1, 2] }, 'id: required'],
    [{ id: '', vector: [1, 2] }, 'id: expected a non-empty string or a non-negative integer, got ""'],
    [{ id: 1.5, vector: [1, 2] }, 'id: expected a non-empty string or a non-negative integer, got 1.5'],
    [{ id: 1 }, 'vector: required'],
    [{ id: 1, vector: [1, 2, 3] }, 'vector: expected 2 numbers, got 3'],
    [{ id: 1, vector: 'ab' }, 'vector: expected 2 numbers, got "ab"'],
    [{ id: 1, vector: [1, null] }, 'vector[1]: expected a finite number, got null'],
    [{ id: 1, vector: [1, 2], payload: 'p' }, 'payload: expected an object, got "p"'],
    [{ id: 1, vector: [1, 2], score: 3 }, 'score: unknown field (expected id, version, vector, sparse_vectors, named_vectors, payload)'],
    [{ id: 1, version: '0', vector: [1, 2] }, 'version: expected a positive integer below 2^64 as a decimal string, got "0"'],
    [
      { id: 1, version: '18446744073709551616', vector: [1, 2] },
      'version: expected a positive integer below 2^64 as a decimal string, got "18446744073709551616"',
    ],
    [{ id: 1, version: 1.5, vector: [1, 2] }, 'version: expected a positive integer below 2^64 as a decimal string, got 1.5'],
  ];
  for (const [value, message] of refused) assert.equal(checkLine(value, 2), message, JSON.stringify(value));
});

test("checkLine reads sparse vectors, beside the vector or in Qdrant's named form, by the collection's names", () => {
  const names = { dense: 'dense', sparse: new Set(['text', 'tags']), named: new Set<string>() };
  const text = { indices: [4294967295, 0], values: [-1.5, 0] };
  const empty = { indices: [], values: [] };
  assert.deepEqual(checkLine({ id: 1, vector: [1, 2], sparse_vectors: { text, tags: empty } }, 2, names), {
    id: 1,
    vector: [1, 2],
    sparse_vectors: { text, tags: empty },
  });
  // Qdrant's form; keys other than indices and values are dropped (the REST API refuses them).
  assert.deepEqual(checkLine({ id: 1, vector: { text: { ...text, extra: 1 }, dense: [1, 2] }, payload: {} }, 2, names), {
    id: 1,
    vector: [1, 2],
    sparse_vectors: { text },
    payload: {},
  });
  assert.deepEqual(checkLine({ id: 1, vector: [1, 2], sparse_vectors: {} }, 2, names), { id: 1, vector: [1, 2] });
  assert.deepEqual(checkLine({ id: 1, vector: { '': [1, 2] } }, 2), { id: 1, vector: [1, 2] });
  const refused: [unknown, string][] = [
    [
      { id: 1, vector: [1, 2], sparse_vectors: { nope: empty } },
      'sparse_vectors.nope: the collection has no sparse vector named "nope" (it has "text", "tags")',
    ],
    [{ id: 1, vector: [1, 2], sparse_vectors: 'x' }, 'sparse_vectors: expected an object of sparse vectors by name, got "x"'],
    [
      { id: 1, vector: [1, 2], sparse_vectors: { text: { indices: [2, 2], values: [1, 1] } } },
      'sparse_vectors.text.indices[1]: duplicate index 2 (also at indices[0]); indices must be unique',
    ],
    [
      { id: 1, vector: [1, 2], sparse_vectors: { text: { indices: [1.5], values: [1] } } },
      'sparse_vectors.text.indices[0]: must be an integer from 0 to 4294967295, got 1.5',
    ],
    [
      { id: 1, vector: [1, 2], sparse_vectors: { text: { indices: [1], values: [] } } },
      'sparse_vectors.text.values: must be the same length as indices (0 values, 1 indices)',
    ],
    [{ id: 1, vector: [1, 2], sparse_vectors: { text: { indices: [1], values: [1e39] } } }, 'sparse_vectors.text.values[0]: 1e+39 is out of float32 range'],
    [
      { id: 1, vector: { dense: [1, 2], 'odd name': [1] } },
      'vector["odd name"]: the collection has no vector named "odd name" (it has "dense", "text", "tags")',
    ],
    [{ id: 1, vector: { text } }, 'vector.dense: required (the dense vector)'],
    [{ id: 1, vector: { dense: [1] } }, 'vector.dense: expected 2 numbers, got 1'],
    [{ id: 1, vector: { dense: [1, 'x'] } }, 'vector.dense[1]: expected a finite number, got "x"'],
    [{ id: 1, vector: { dense: [1, 2], tags: { indices: [-1], values: [1] } } }, 'vector.tags.indices[0]: must be an integer from 0 to 4294967295, got -1'],
    [{ id: 1, vector: { dense: [1, 2], text }, sparse_vectors: { text } }, 'vector.text: also given in sparse_vectors'],
  ];
  for (const [value, message] of refused) assert.equal(checkLine(value, 2, names), message, JSON.stringify(value));
  // Without names (a collection with neither), a sparse vector is refused by name.
  assert.equal(checkLine({ id: 1, vector: [1, 2], sparse_vectors: { text } }, 2), 'sparse_vectors.text: the collection has no sparse vector named "text"');
});

test("checkLine reads named dense vectors from named_vectors and from Qdrant's named form of vector, each name once", () => {
  const names = { dense: 'dense', sparse: new Set(['text']), named: new Set(['img', 'colbert', '__proto__']) };
  // Qdrant's form with every kind of vector: the dense one, a sparse one, named ones (a multi-vector among them).
  // Parsed from JSON, as a file's line is: "__proto__" is then an own key, kept as one.
  const parsed = JSON.parse(
    '{"id":1,"vector":{"dense":[1,2],"text":{"indices":[1],"values":[0.5]},"img":[0.1,0.2,0.3],"colbert":[[1],[2]]},"named_vectors":{"__proto__":[9]}}',
  );
  assert.deepEqual(
    checkLine(parsed, 2, names),
    JSON.parse(
      '{"id":1,"vector":[1,2],"sparse_vectors":{"text":{"indices":[1],"values":[0.5]}},"named_vectors":{"__proto__":[9],"img":[0.1,0.2,0.3],"colbert":[[1],[2]]}}',
    ),
  );
  const line = checkLine(JSON.parse('{"id":1,"vector":{"dense":[1,2],"__proto__":[7]}}'), 2, names);
  assert.ok(typeof line !== 'string' && Object.hasOwn(line.named_vectors ?? {}, '__proto__'), 'a name such as __proto__ is an own key');
  // named_vectors alone passes as given (the collection checks sizes); a name in both is refused.
  assert.deepEqual(checkLine({ id: 1, vector: [1, 2], named_vectors: { img: [1] } }, 2, names), { id: 1, vector: [1, 2], named_vectors: { img: [1] } });
  assert.equal(checkLine({ id: 1, vector: { dense: [1, 2], img: [1] }, named_vectors: { img: [2] } }, 2, names), 'vector.img: also given in named_vectors');
  assert.equal(checkLine({ id: 1, vector: [1, 2], named_vectors: [1] }, 2, names), 'named_vectors: expected an object of named vectors, got an array');
  assert.equal(
    checkLine({ id: 1, vector: { dense: [1, 2], nope: [1] } }, 2, names),
    'vector.nope: the collection has no vector named "nope" (it has "dense", "text", "img", "colbert", "__proto__")',
  );
});

test('table pads columns and cuts long cells; toJson writes bigint versions as digits', () => {
  assert.equal(
    table(
      ['ID', 'SCORE'],
      [
        ['1', '0.5'],
        ['long-id', '1'],
      ],
    ),
    'ID       SCORE\n1        0.5\nlong-id  1',
  );
  assert.equal(table(['A', 'B'], [['abcdef', 'x']], 4), 'A     B\nabc…  x');
  assert.equal(toJson({ version: 1795484551285159150n }), '{"version":"1795484551285159150"}');
});
