import t from 'tap';
import { isJsonObject, parseJsonObject, sameJson } from '../../src/lib/json.js';

t.test('isJsonObject: plain objects only', async (t) => {
  t.ok(isJsonObject({}));
  t.ok(isJsonObject({ a: 1 }));
  for (const v of [null, [], [1], 'x', 1, true, undefined]) t.notOk(isJsonObject(v), JSON.stringify(v) ?? 'undefined');
});

t.test('parseJsonObject: an object body parsed; anything else null', async (t) => {
  t.same(parseJsonObject(Buffer.from('{"a":[1,{"b":null}]}')), { a: [1, { b: null }] });
  for (const text of ['', '{', '[1,2]', '"x"', '3', 'null']) t.equal(parseJsonObject(Buffer.from(text)), null, text || 'empty');
});

t.test('sameJson: scalars, arrays in order, objects in any key order', async (t) => {
  t.ok(sameJson({ a: [1, { b: 'x', c: null }] }, { a: [1, { c: null, b: 'x' }] }));
  t.notOk(sameJson([1, 2], [2, 1]));
  t.notOk(sameJson({ a: 1 }, { a: 1, b: 2 }));
  t.notOk(sameJson({ a: 1, b: 2 }, { a: 1 }));
  t.notOk(sameJson(JSON.parse('{"__proto__":{}}'), {}), 'a parsed __proto__ key is a key');
  t.notOk(sameJson({}, JSON.parse('{"__proto__":{}}')));
  t.ok(sameJson(JSON.parse('{"__proto__":{"x":1},"y":2}'), JSON.parse('{"y":2,"__proto__":{"x":1}}')));
  t.notOk(sameJson({ a: 1, b: 2 }, { a: 1, c: 2 }));
  t.notOk(sameJson({ a: '1' }, { a: 1 }));
  t.notOk(sameJson([], {}));
  t.notOk(sameJson(null, {}));
});
