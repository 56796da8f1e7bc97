import { readFileSync } from 'node:fs';
import t from 'tap';
import { fingerprintOf } from '../../../src/policy/anomaly/history.js';
import { offeredToolsAsSent, readOfferedTools } from '../../../src/policy/anomaly/offered-tools.js';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/harness-requests/${name}.json`, import.meta.url), 'utf8')).body;

const names = (body: Record<string, unknown>): string[] => readOfferedTools(body).map((d) => d.name);

t.test('Anthropic: client tools, deferred tools and server tools without a schema', async (t) => {
  const tools = readOfferedTools({
    tools: [
      { name: 'Bash', description: 'Run it', input_schema: { type: 'object', properties: { command: { type: 'string' } } }, cache_control: { type: 'ephemeral' } },
      { name: 'Later', description: 'Loaded on demand', input_schema: { type: 'object' }, defer_loading: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
    ],
  });
  t.same(tools, [
    { name: 'Bash', description: 'Run it', schema: '{"properties":{"command":{"type":"string"}},"type":"object"}' },
    { name: 'Later', description: 'Loaded on demand', schema: '{"type":"object"}' },
    { name: 'web_search', description: '', schema: 'null' },
  ]);
});

t.test('OpenAI chat: the definition under `function`', async (t) => {
  t.same(readOfferedTools({ tools: [{ type: 'function', function: { name: 'read', description: 'Reads', parameters: { type: 'object' } } }] }), [
    { name: 'read', description: 'Reads', schema: '{"type":"object"}' },
  ]);
});

t.test('Responses: function, custom with its grammar, namespaces by path, built-ins by type', async (t) => {
  const tools = readOfferedTools({
    tools: [
      { type: 'function', name: 'exec_command', description: 'Runs', parameters: { type: 'object' }, strict: false },
      { type: 'custom', name: 'apply_patch', description: 'Patches', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
      { type: 'namespace', name: 'agents', description: 'Sub-agents.', tools: [{ type: 'function', name: 'spawn', description: 'Spawns', parameters: {} }] },
      { type: 'namespace', name: 'functions', description: '', tools: [{ type: 'namespace', name: 'inner', tools: [{ type: 'function', name: 'x', parameters: {} }] }] },
      { type: 'web_search', external_web_access: false },
      { type: 'function', description: 'no name' },
    ],
  });
  t.same(
    tools.map((d) => [d.name, d.description, d.schema]),
    [
      ['exec_command', 'Runs', '{"type":"object"}'],
      ['apply_patch', 'Patches', '{"definition":"start: x","syntax":"lark","type":"grammar"}'],
      ['agents', 'Sub-agents.', 'null'],
      ['agents.spawn', 'Spawns', '{}'],
      ['functions.inner.x', '', '{}'],
      ['web_search', '', 'null'],
    ],
  );
});

t.test("Codex's `additional_tools` input items, Gemini's `functionDeclarations`", async (t) => {
  t.same(names({ input: [{ type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec', description: 'JS' }] }] }, { role: 'user', content: 'hi' }] }), ['functions.exec']);
  t.same(readOfferedTools({ tools: [{ functionDeclarations: [{ name: 'glob', description: 'Finds', parametersJsonSchema: { type: 'object' } }] }, { googleSearch: {} }] }), [
    { name: 'glob', description: 'Finds', schema: '{"type":"object"}' },
  ]);
});

t.test('every harness fixture offers its tools where the harness puts them', async (t) => {
  t.same(names(fixture('claude-code-default')).slice(0, 3), ['Agent', 'Bash', 'Edit']);
  t.ok(names(fixture('claude-code-sonnet-mcp')).includes('mcp__filesystem__read_text_file'));
  t.same(names(fixture('codex-code-mode')).slice(0, 3), ['functions.exec', 'functions.wait', 'functions.request_user_input']);
  t.ok(names(fixture('codex-function-tools')).includes('multi_agent_v1.spawn_agent'));
  t.ok(names(fixture('gemini-cli-yolo')).includes('run_shell_command'));
  t.ok(names(fixture('opencode-chat-completions')).includes('bash'));
  t.ok(names(fixture('cursor-agent')).includes('run_terminal_cmd'));
});

t.test('the tools as sent: `tools` and the additional_tools items; null without tools', async (t) => {
  const body = fixture('codex-code-mode');
  const [first] = body.input as unknown[];
  t.same(offeredToolsAsSent(body), [null, first]);
  t.same(offeredToolsAsSent({ tools: [{ name: 'a' }] }), [[{ name: 'a' }]]);
  t.equal(offeredToolsAsSent({ messages: [] }), null);
});

t.test('a Gemini body is named by its system instruction and first turn', async (t) => {
  const gemini = fixture('gemini-cli-headless');
  const other = { ...gemini, systemInstruction: { parts: [{ text: 'another agent' }] } };
  t.not(fingerprintOf(gemini), fingerprintOf(other));
});
