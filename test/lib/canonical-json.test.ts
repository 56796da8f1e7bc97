import t from 'tap';
import { canonicalArguments, canonicalJson } from '../../src/lib/canonical-json.js';

t.test('keys are sorted at every level by UTF-16 code unit; arrays keep their order', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  t.equal(canonicalJson({ a: 1, b: 2 }), '{"a":1,"b":2}', 'keys already in order are kept');
  t.equal(canonicalJson({ é: 1, z: 2, Z: 3, '10': 4, '9': 5 }), '{"10":4,"9":5,"Z":3,"z":2,"é":1}', 'integer-like keys sort as text, not by value');
  t.equal(canonicalJson({ b: 1, a: 2 }), canonicalJson({ a: 2, b: 1 }), 'two orders write one text');
});

t.test('undefined members are left out; undefined elsewhere is null, as JSON.stringify writes it in arrays', async (t) => {
  t.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
  t.equal(canonicalJson({ a: undefined }), '{}');
  t.equal(canonicalJson([undefined, 1]), '[null,1]');
  t.equal(canonicalJson(undefined), 'null');
  t.equal(canonicalJson([]), '[]');
});

t.test('strings and keys are escaped as JSON', async (t) => {
  t.equal(canonicalJson({ 'a"b': 'line\nbreak\u0000' }), '{"a\\"b":"line\\nbreak\\u0000"}');
  t.same(JSON.parse(canonicalJson({ q: '\u2028"\\' })), { q: '\u2028"\\' });
});

t.test('tool arguments agree whether sent as a JSON string or an object', async (t) => {
  t.equal(canonicalArguments('{"b":1,"a":2}'), canonicalArguments({ a: 2, b: 1 }));
  t.equal(canonicalArguments('  ls -la  '), '"ls -la"', 'a freeform input is its trimmed text');
});
