import t from 'tap';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { DecideRuntime } from '../../src/decide/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { DROP_TABLE_RECORD, MODEL, pinFor, rule } from '../helpers/decide.js';

const logger = createLogger('silent');

function runtime(records: object[], model = MODEL) {
  const rules = records.map((r) => rule(r));
  const pins = rules.length === 0 ? {} : pinFor(rules[0]!, model);
  return new DecideRuntime({ engine: buildEngineConfig({ url: 'http://127.0.0.1:9/v1', model }, {}), loaded: { rules, unreadable: [], sopTexts: [] }, pins, env: {}, logger });
}

t.test('the fingerprint follows what the runtime would judge differently', async (t) => {
  const base = runtime([DROP_TABLE_RECORD]);
  t.equal(runtime([DROP_TABLE_RECORD]).fingerprint, base.fingerprint, 'the same rules, model and pins: the same fingerprint');
  t.not(runtime([]).fingerprint, base.fingerprint, 'no rules');
  t.not(runtime([{ ...DROP_TABLE_RECORD, when: 'not drops' }]).fingerprint, base.fingerprint, 'a changed rule');
  t.not(runtime([DROP_TABLE_RECORD], 'judge-7b@sha256:fedcba9876543210').fingerprint, base.fingerprint, 'another model');
});
