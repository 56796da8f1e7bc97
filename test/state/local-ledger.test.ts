import t from 'tap';
import { periodOf } from '../../src/state/periods.js';
import { LocalLedger } from '../../src/state/redis/local-ledger.js';

const NOON = Date.UTC(2026, 10, 21, 12);
const TODAY = periodOf(NOON);
const TOMORROW = periodOf(NOON + 86_400_000);

t.test('the offline view is the last Redis reply plus what Redis has not seen', async (t) => {
  const ledger = new LocalLedger();
  t.same(ledger.totals('ws', TODAY, NOON), { spentDay: 0, reservedDay: 0, spentMonth: 0, reservedMonth: 0 }, 'never reported: zero');

  ledger.observe('ws', TODAY, { spentDay: 100, reservedDay: 10, spentMonth: 500, reservedMonth: 10 });
  ledger.hold('ws', 'a', 7, TODAY, NOON + 60_000);
  ledger.queued({ workspace: 'ws', id: 'b', micros: 3, period: TODAY, now: NOON });
  t.same(ledger.totals('ws', TODAY, NOON), { spentDay: 103, reservedDay: 17, spentMonth: 503, reservedMonth: 17 });
  t.equal(ledger.isHeld('ws', 'a'), true);

  t.match(ledger.release('ws', 'a'), { micros: 7, period: TODAY }, 'a local hold is released with its period');
  t.equal(ledger.release('ws', 'a'), undefined);
  ledger.delivered({ workspace: 'ws', id: 'b', micros: 3, period: TODAY, now: NOON });
  t.same(ledger.totals('ws', TODAY, NOON), { spentDay: 100, reservedDay: 10, spentMonth: 500, reservedMonth: 10 });
});

t.test('a reply about an earlier day keeps the newer day but refreshes the month (replies arrive in order)', async (t) => {
  const ledger = new LocalLedger();
  ledger.observe('ws', TOMORROW, { spentDay: 5, reservedDay: 0, spentMonth: 900, reservedMonth: 0 });
  ledger.observe('ws', TODAY, { spentDay: 100, reservedDay: 0, spentMonth: 800, reservedMonth: 0 });
  t.same(ledger.totals('ws', TOMORROW, NOON + 86_400_000), { spentDay: 5, reservedDay: 0, spentMonth: 800, reservedMonth: 0 });
  t.same(ledger.totals('ws', TODAY, NOON), { spentDay: 0, reservedDay: 0, spentMonth: 800, reservedMonth: 0 }, 'a day not last reported reads as zero');
});

t.test('a local hold never settled stops counting after its TTL', async (t) => {
  const ledger = new LocalLedger();
  ledger.hold('ws', 'lost', 50, TODAY, NOON + 60_000);
  t.equal(ledger.totals('ws', TODAY, NOON).reservedDay, 50);
  t.equal(ledger.totals('ws', TODAY, NOON + 60_000).reservedDay, 0);
  t.equal(ledger.isHeld('ws', 'lost'), false);
});
