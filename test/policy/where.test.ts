import t from 'tap';
import { matchesWhere, parseWhere, WhereSyntaxError } from '../../src/policy/where.js';
import { compileSopRules, firstSopMatch, sopRulesSchema } from '../../src/policy/sop-rules.js';

const call = { tool: 'Bash', input: { command: 'psql -h prod-db.internal -c "DELETE FROM users"', count: 250, branch: 'main', target: { env: 'prod' }, tags: ['a', 'b'], empty: null } };
const is = (clause: string, c: { tool: string; input: unknown } = call) => matchesWhere(parseWhere(clause), c);

t.test('operators', async (t) => {
  t.ok(is("command CONTAINS 'PROD-DB'"), 'CONTAINS is case-insensitive');
  t.ok(is("command STARTS WITH 'psql'"));
  t.ok(is("command ENDS WITH 'users\"'"));
  t.ok(is("command MATCHES 'DELETE\\s+FROM'"));
  t.ok(is("tool = 'Bash'"));
  t.ok(is("tool != 'Edit'"));
  t.ok(is('count > 100 AND count <= 250'));
  t.notOk(is('count < 100'));
  t.ok(is("branch IN ('main', 'release')"));
  t.ok(is("args.branch = 'main'"), 'args. is the input itself');
  t.ok(is("target.env = 'prod'"), 'a dotted path');
  t.ok(is('missing IS NULL'));
  t.ok(is('empty IS NULL'));
  t.ok(is('count IS NOT NULL'));
  t.notOk(is("missing = 'x'"), 'an absent field equals nothing');
  t.ok(is("missing != 'x'"));
  t.ok(is("tags CONTAINS 'b'"), 'an array is read as its JSON');
  t.ok(is("count = 250 OR tool = 'x' AND count = 0"), 'AND binds tighter than OR');
  t.notOk(is("NOT (tool = 'Bash')"));
  t.ok(is("tool = 'it''s'", { tool: "it's", input: {} }), 'a doubled quote in a string');
});

t.test('clauses that do not read say where', async (t) => {
  for (const [clause, message] of [
    ["command CONTAINS 'x", /unterminated string/],
    ['command', /operator is missing/],
    ["command LIKE 'x'", /unknown operator 'LIKE'/],
    ["command = 'x' AND", /condition is missing/],
    ["(command = 'x'", /expected '\)'/],
    ["command MATCHES '('", /does not compile/],
    ["command = 'x' extra", /unexpected 'extra'/],
    ['x'.repeat(2001), /at most 2000/],
    [`${'('.repeat(40)}a = 1${')'.repeat(40)}`, /nests too deeply/],
  ] as const) {
    t.throws(() => parseWhere(clause), message, clause.slice(0, 40));
    t.ok((() => {
      try {
        parseWhere(clause);
        return false;
      } catch (err) {
        return err instanceof WhereSyntaxError;
      }
    })(), 'a WhereSyntaxError');
  }
});

t.test('SOP rules: validated, first match wins, tools and clauses both apply', async (t) => {
  const bad = sopRulesSchema.safeParse([{ id: 'x', action: 'block', where: "a LIKE 'b'", reason: 'r' }]);
  t.notOk(bad.success);
  t.notOk(sopRulesSchema.safeParse([{ id: 'x', action: 'block', reason: 'r' }, { id: 'x', action: 'block', reason: 'r' }]).success, 'ids are unique');
  const rules = compileSopRules(
    sopRulesSchema.parse([
      { id: 'prod-db', action: 'block', tools: ['Bash'], where: "command CONTAINS 'prod-db'", reason: 'no production database from agents' },
      { id: 'big', action: 'require_approval', where: 'count > 100', reason: 'big batches need review' },
    ]),
  );
  t.equal(firstSopMatch(rules, 'Bash', call.input)?.id, 'prod-db');
  t.equal(firstSopMatch(rules, 'Edit', call.input)?.id, 'big', 'the first rule names only Bash');
  t.equal(firstSopMatch(rules, 'Edit', { count: 3 }), undefined);
});
