import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { anomalyFixtureSchema, replayFixture, scoreFixtures } from '../../../src/policy/anomaly/evaluate.js';
import { buildPolicyConfig } from '../../../src/policy/policy-config.js';

const DIR = new URL('../../fixtures/anomaly/histories/', import.meta.url);
const fixtures = readdirSync(DIR)
  .filter((n) => n.endsWith('.json'))
  .map((n) => anomalyFixtureSchema.parse(JSON.parse(readFileSync(new URL(n, DIR), 'utf8'))));
const policy = buildPolicyConfig({ version: 'fixtures', settings: {}, localPii: undefined, env: {} });

t.test('the set: at least 30 histories in all three shapes, every detector and healthy sessions', async (t) => {
  t.ok(fixtures.length >= 30, `${fixtures.length} histories`);
  t.same(new Set(fixtures.map((f) => f.wire)), new Set(['openai', 'anthropic', 'responses']));
  const labels = new Set(fixtures.map((f) => f.label));
  for (const id of ['consecutive_repeat', 'ping_pong_cycle', 'landmark_cycle', 'tool_diversity_collapse', 'code_as_action', 'tool_poisoning', 'dlp_escalation', 'healthy']) {
    t.ok(labels.has(id as never), `has ${id}`);
  }
  t.ok(fixtures.filter((f) => f.label === 'healthy').length >= 10, 'ten healthy sessions or more');
});

for (const fixture of fixtures) {
  t.test(fixture.name, async (t) => {
    const fired = replayFixture(fixture, policy);
    if (fixture.label === 'healthy') {
      t.same([...fired.keys()], [], 'no detector acts on a healthy session');
      return;
    }
    t.same([...fired.keys()], [fixture.label], `only ${fixture.label} acts`);
    t.ok(fired.get(fixture.label)! <= fixture.catchByCall!, `caught by call ${fixture.catchByCall} (at ${fired.get(fixture.label)})`);
  });
}

t.test('precision and recall are 1 for every detector', async (t) => {
  for (const [id, score] of Object.entries(scoreFixtures(fixtures, policy))) {
    t.match(score, { precision: 1, recall: 1 }, id);
    t.equal(score.inTime, score.labelled, `${id}: every loop caught in time`);
  }
});
