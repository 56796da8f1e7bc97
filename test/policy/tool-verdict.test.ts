import t from 'tap';
import { argumentsSha256, canonicalArguments } from '../../src/lib/canonical-json.js';
import { HoldLedgerError, type HoldLedger, type HoldRequest } from '../../src/policy/holds.js';
import { mcpRefusal, parseMcpToolName } from '../../src/policy/mcp.js';
import { toolCallNotice } from '../../src/policy/notice.js';
import { redactArguments, redactText } from '../../src/policy/redact-arguments.js';
import { DlpScanner } from '../../src/policy/dlp/scanner.js';
import type { ToolCall, ToolCallContext, ToolCallJudge, ToolVerdict } from '../../src/policy/tool-judge.js';
import { isReadOnlyTool, judgeToolCalls, redactCallArguments, toolPolicyActive } from '../../src/policy/tool-verdict.js';

const ctx: ToolCallContext = { workspace: 'ws', model: 'm', harness: 'claude-code', session: 's1', traceId: 'tr_1' };
const call = (name: string, args: object | string, id = 'c1'): ToolCall => ({ id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args), input: typeof args === 'string' ? 'text' : 'json' });

function judge(verdict: (c: ToolCall) => ToolVerdict): ToolCallJudge {
  return { active: true, judge: async (calls) => calls.map(verdict) };
}
const holdRule = judge((c) => (c.arguments.includes('--force') ? { action: 'hold', rule: 'force-push', reason: 'needs approval', source: 'wasm' } : { action: 'allow' }));

function ledger(opts: { approved?: boolean; failLookup?: boolean; failRecord?: boolean } = {}) {
  const recorded: HoldRequest[] = [];
  const used: string[] = [];
  const l: HoldLedger = {
    async approval(key) {
      if (opts.failLookup) throw new HoldLedgerError('the control plane could not be reached');
      return opts.approved ? { holdId: 'hold_A', rule: key.rule, expiresAt: '2030-01-01T00:00:00.000Z' } : null;
    },
    async record(request) {
      if (opts.failRecord) throw new HoldLedgerError('the control plane could not be reached');
      recorded.push(request);
      return { holdId: 'hold_NEW', incidentId: 'inc_1' };
    },
    bypassUsed: (b) => used.push(b.holdId),
  };
  return { l, recorded, used };
}

t.test('canonical arguments: keys sorted at every level, a JSON string read as JSON', async (t) => {
  t.equal(canonicalArguments('{"b":{"y":1,"x":[{"d":1,"c":2}]},"a":"z"}'), '{"a":"z","b":{"x":[{"c":2,"d":1}],"y":1}}');
  t.equal(argumentsSha256({ a: 1, b: 2 }), argumentsSha256('{"b":2,"a":1}'));
  t.not(argumentsSha256({ a: 1 }), argumentsSha256({ a: '1' }));
  t.equal(argumentsSha256('rm -rf build '), argumentsSha256('rm -rf build'), 'raw text is trimmed');
});

t.test('a held call is recorded with the exact-call key; an approval lets it through and is reported', async (t) => {
  const c = call('Bash', { command: 'git push --force origin main' });
  const fresh = ledger();
  const [held] = await judgeToolCalls([c], ctx, { judges: [holdRule], holds: fresh.l });
  t.match(held, { action: 'hold', rule: 'force-push', hold: { holdId: 'hold_NEW', incidentId: 'inc_1' } });
  t.same(fresh.recorded[0]!.key, { rule: 'force-push', tool: 'Bash', argumentsSha256: argumentsSha256({ command: 'git push --force origin main' }) });
  t.equal(toolCallNotice(c, held as Exclude<ToolVerdict, { action: 'allow' }>), "[Svc Governance] HELD: the Bash tool call awaits a person's approval (rule force-push: needs approval) (hold hold_NEW). It was not run; do not retry it until a person has approved hold hold_NEW. Incident inc_1.");

  const approved = ledger({ approved: true });
  const [through] = await judgeToolCalls([c], ctx, { judges: [holdRule], holds: approved.l });
  t.match(through, { action: 'allow', bypass: { holdId: 'hold_A', rule: 'force-push', source: 'wasm' } });
  t.same(approved.used, ['hold_A']);
  t.same(approved.recorded, [], 'no new hold');
});

t.test('no ledger, or one that cannot be reached: the call stays held and says no hold id could be recorded', async (t) => {
  const c = call('Bash', { command: 'git push --force' });
  const [none] = await judgeToolCalls([c], ctx, { judges: [holdRule], holds: null });
  t.match(none, { action: 'hold', hold: { holdId: null, unrecorded: 'no control plane is configured' } });
  t.match(toolCallNotice(c, none as Exclude<ToolVerdict, { action: 'allow' }>), /HELD: .*; no hold id could be recorded: no control plane is configured\. It was not run; do not retry it\.$/);
  const down = ledger({ failLookup: true, failRecord: true });
  const [unreached] = await judgeToolCalls([c], ctx, { judges: [holdRule], holds: down.l });
  t.match(unreached, { action: 'hold', hold: { holdId: null, unrecorded: 'the control plane could not be reached' } });
  const [shadow] = await judgeToolCalls([c], ctx, { judges: [holdRule] });
  t.same(shadow, { action: 'hold', rule: 'force-push', reason: 'needs approval', source: 'wasm' }, 'without holds (shadow) the verdict is left unresolved');
});

t.test('a block from any judge wins over a hold; every hold rule needs its own approval', async (t) => {
  const blocker = judge(() => ({ action: 'block', rule: 'no-push', reason: 'never', source: 'decide' }));
  const c = call('Bash', { command: 'git push --force' });
  const { l, recorded } = ledger({ approved: true });
  const [v] = await judgeToolCalls([c], ctx, { judges: [holdRule, blocker], holds: l });
  t.match(v, { action: 'block', rule: 'no-push' });
  t.same(recorded, []);
  const second = judge(() => ({ action: 'hold', rule: 'second', reason: 'also', source: 'decide' }));
  const partial: HoldLedger = { approval: async (key) => (key.rule === 'force-push' ? { holdId: 'hold_A', rule: 'force-push', expiresAt: '2030-01-01T00:00:00Z' } : null), record: async () => ({ holdId: 'hold_2', incidentId: null }) };
  const [both] = await judgeToolCalls([c], ctx, { judges: [holdRule, second], holds: partial });
  t.match(both, { action: 'hold', rule: 'second', hold: { holdId: 'hold_2' } });
  const broken: ToolCallJudge = { active: true, judge: async () => Promise.reject(new Error('boom')) };
  t.match((await judgeToolCalls([c], ctx, { judges: [broken] }))[0], { action: 'block', rule: 'judge_failure', unavailable: true }, 'a judge that rejects refuses (fail closed)');
  const throwing: ToolCallJudge = {
    active: true,
    judge: () => {
      throw new Error('boom');
    },
  };
  t.match((await judgeToolCalls([c], ctx, { judges: [throwing] }))[0], { action: 'block', rule: 'judge_failure', unavailable: true }, 'so does one that throws');
});

t.test('judges that answer at once get a verdict at once; only a hold put to the ledger, or a judge that waits, makes the caller wait', async (t) => {
  const now = (verdict: (c: ToolCall) => ToolVerdict): ToolCallJudge => ({ active: true, judge: (calls) => calls.map(verdict) });
  const c = call('Bash', { command: 'git push --force' });
  const allowed = judgeToolCalls([c, call('Read', { path: 'a' }, 'c2')], ctx, { judges: [now(() => ({ action: 'allow' }))], holds: ledger().l });
  t.same(allowed, [{ action: 'allow' }, { action: 'allow' }], 'an array, not a promise');
  const blocked = judgeToolCalls([c], ctx, { judges: [now(() => ({ action: 'hold', rule: 'h', reason: 'r', source: 'wasm' })), now(() => ({ action: 'block', rule: 'b', reason: 'r', source: 'wasm' }))], holds: ledger().l });
  t.match(blocked, [{ action: 'block', rule: 'b' }], 'a block needs no ledger');
  const held = judgeToolCalls([c], ctx, { judges: [now(() => ({ action: 'hold', rule: 'h', reason: 'r', source: 'wasm' }))], holds: ledger().l });
  t.ok(held instanceof Promise, 'a hold asks the ledger');
  t.match(await held, [{ action: 'hold', hold: { holdId: 'hold_NEW' } }]);
  const waiting = judgeToolCalls([c], ctx, { judges: [now(() => ({ action: 'allow' })), judge(() => ({ action: 'allow' }))] });
  t.ok(waiting instanceof Promise, 'a judge that answers later');
  t.same(await waiting, [{ action: 'allow' }]);
});

t.test('MCP lists: mcp__<server>__<tool> names only', async (t) => {
  t.same(parseMcpToolName('mcp__github__create_issue'), { server: 'github', tool: 'create_issue' });
  t.equal(parseMcpToolName('Bash'), null);
  t.equal(mcpRefusal('mcp__github__create_issue', { allowedServers: ['github'] }), null);
  t.match(mcpRefusal('mcp__gitlab__x', { allowedServers: ['github'] }), { code: 'SERVER_NOT_ALLOWED', rule: 'mcpAllowedServers' });
  t.match(mcpRefusal('mcp__gitlab__x', { defaultPolicy: 'deny' }), { code: 'SERVER_NOT_APPROVED' });
  t.equal(mcpRefusal('mcp__github__x', { defaultPolicy: 'deny', allowedServers: ['github'] }), null, 'listed is approved');
  t.match(mcpRefusal('mcp__github__delete_repo', { allowedTools: ['create_issue'] }), { code: 'TOOL_DISABLED' });
  t.equal(mcpRefusal('mcp__github__create_issue', { allowedTools: ['mcp__github__create_issue'] }), null);
  t.equal(mcpRefusal('Bash', { defaultPolicy: 'deny', allowedServers: ['x'], allowedTools: ['y'] }), null, 'other tools are not MCP tools');
  const [v] = await judgeToolCalls([call('mcp__gitlab__x', {})], ctx, { judges: [], mcp: { allowedServers: ['github'] } });
  t.match(v, { action: 'block', source: 'mcp', code: 'SERVER_NOT_ALLOWED' });
  t.ok(toolPolicyActive({ judges: [], mcp: { allowedServers: ['github'] } }));
  t.notOk(toolPolicyActive({ judges: [], mcp: { allowedServers: [] } }));
});

t.test('DLP over arguments: block detectors refuse, redact detectors flag', async (t) => {
  const scanner = new DlpScanner();
  const dlp = { scan: (s: string) => scanner.scan(s), actions: { 'pii.card': 'block', 'pii.email': 'redact' } as const };
  const [card] = await judgeToolCalls([call('send', { body: { text: 'card 4539 1488 0343 6467' } })], ctx, { judges: [], dlp });
  t.match(card, { action: 'block', source: 'dlp', rule: 'pii.card' });
  const [email] = await judgeToolCalls([call('send', { to: 'alice@example.com' })], ctx, { judges: [], dlp });
  t.match(email, { action: 'allow', flagged: ['pii.email'] });
  const [text] = await judgeToolCalls([call('exec', 'echo 4539 1488 0343 6467')], ctx, { judges: [], dlp });
  t.match(text, { action: 'block' }, 'raw text input is scanned too');
});

t.test('read-only tools', async (t) => {
  for (const name of ['read_file', 'list_files', 'Read', 'cat', 'view']) t.ok(isReadOnlyTool(name), name);
  t.notOk(isReadOnlyTool('Bash'));
});

t.test('arguments shown to reviewers: structure kept, secrets out', async (t) => {
  const shown = redactArguments({
    command: 'psql postgres://admin:hunter2secret@db.internal/prod -c "select 1" && export AWS_SECRET_ACCESS_KEY=abcd1234efgh5678 && git push --force',
    env: { API_TOKEN: 'tok_123456789', path: '/usr/bin' },
    password: 'p@ss',
    note: 'card 4539 1488 0343 6467, key AKIAABCDEFGHIJKLMNOP',
    nested: [{ authorization: 'Basic dXNlcjpwYXNz' }],
    big: 'x'.repeat(5000),
  }) as Record<string, unknown>;
  const text = JSON.stringify(shown);
  for (const secret of ['hunter2secret', 'abcd1234efgh5678', 'tok_123456789', 'p@ss', '4539', 'AKIAABCDEFGHIJKLMNOP', 'dXNlcjpwYXNz']) t.notOk(text.includes(secret), `${secret} is not shown`);
  t.match(shown.command, /postgres:\/\/admin:\[REDACTED:url_password\]@db\.internal\/prod .* git push --force$/);
  t.equal((shown.env as Record<string, unknown>).path, '/usr/bin');
  t.match(shown.big, /more characters not shown\]$/);
  t.same(redactArguments('{"command":"git push --force origin main"}'), { command: 'git push --force origin main' }, 'nothing to redact: unchanged');
});

t.test('redactCallArguments redacts what redact-action detectors find in every string, keys and other values kept', async (t) => {
  const scanner = new DlpScanner(['pii.card', 'pii.email']);
  const args = { to: 'ana@example.com', note: { lines: ['card 4111 1111 1111 1111', 'plain'] }, count: 3, flag: true, empty: null };
  const out = redactCallArguments(args, scanner, { 'pii.card': 'redact', 'pii.email': 'block' });
  t.same(out, { to: 'ana@example.com', note: { lines: ['card [REDACTED:pii.card]', 'plain'] }, count: 3, flag: true, empty: null });
  t.equal(args.note.lines[0], 'card 4111 1111 1111 1111', 'the input is not changed');
});

t.test('a password in a URL is redacted from shown arguments in linear time', async (t) => {
  // `[a-z0-9+.-]*` before `://` read a run of `a.a.a…` from every word to its end: quadratic.
  const redacted = redactText(`${'a.'.repeat(300_000)} https://deploy:hunter2pass@example.com/x`);
  t.ok(redacted.endsWith(' https://deploy:[REDACTED:url_password]@example.com/x'));
});
