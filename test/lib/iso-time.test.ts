import t from 'tap';
import { isoTime } from '../../src/lib/iso-time.js';

const same = (t: Tap.Test, ms: number) => t.equal(isoTime(ms), new Date(ms).toISOString(), String(ms));

t.test('a time reads as toISOString writes it', async (t) => {
  const now = Date.now();
  // Consecutive calls in one second, then across seconds, minutes, days and years.
  for (let ms = now - 2500; ms < now + 2500; ms += 7) same(t, ms);
  for (const ms of [0, 1, 9, 10, 99, 100, 999, 1000, 59_999, 60_000, 86_399_999, 86_400_000, Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1)]) same(t, ms);
});

t.test('before the epoch, fractions and the years toISOString writes with six digits', async (t) => {
  for (const ms of [-1, -999, -1000, -1001, -0.5, -1000.5, 1_700_000_000_123.9, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000]) same(t, ms);
  // The second cached before an out-of-range time is still right after it.
  same(t, 1_700_000_000_001);
  same(t, 253_402_300_800_000);
  same(t, 1_700_000_000_002);
});
