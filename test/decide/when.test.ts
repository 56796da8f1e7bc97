import t from 'tap';
import { evaluateWhen, namesIn, parseWhen, WhenSyntaxError, type Answer } from '../../src/decide/when.js';

const truth = (src: string, answers: Record<string, Answer>) => evaluateWhen(parseWhen(src), answers);

t.test('and, or, not and parentheses, with and binding tighter than or', async (t) => {
  t.equal(truth('a and b', { a: 'yes', b: 'yes' }), true);
  t.equal(truth('a and b', { a: 'yes', b: 'no' }), false);
  t.equal(truth('a or b and c', { a: 'yes', b: 'no', c: 'no' }), true);
  t.equal(truth('(a or b) and c', { a: 'yes', b: 'no', c: 'no' }), false);
  t.equal(truth('not a', { a: 'no' }), true);
  t.equal(truth('NOT (a AND b)', { a: 'yes', b: 'yes' }), false);
  t.same([...namesIn(parseWhen('drops and not (backup or staging)'))].sort(), ['backup', 'drops', 'staging']);
});

t.test('three-valued: unknown stays unknown unless the other side settles it', async (t) => {
  t.equal(truth('a and b', { a: 'unknown', b: 'no' }), false);
  t.equal(truth('a and b', { a: 'unknown', b: 'yes' }), 'unknown');
  t.equal(truth('a or b', { a: 'unknown', b: 'yes' }), true);
  t.equal(truth('a or b', { a: 'unknown', b: 'no' }), 'unknown');
  t.equal(truth('not a', { a: 'unknown' }), 'unknown');
  t.equal(truth('a', {}), 'unknown', 'a missing answer is unknown');
});

t.test('syntax errors name a column; nothing is evaluated as code', async (t) => {
  for (const bad of ['', 'a and', '(a or b', 'a b', 'and a', 'a; process.exit(1)', 'a && b', ')', 'a or or b']) {
    t.throws(() => parseWhen(bad), WhenSyntaxError, bad);
  }
  t.throws(() => parseWhen('a and ?'), { column: 7 });
  t.throws(() => parseWhen('('.repeat(40) + 'a' + ')'.repeat(40)), /nested deeper/);
});
