import tap from 'tap';
import type { PiiDetectorId } from '../../../src/config/settings.js';
import { DlpScanner, redact, type DlpMatch } from '../../../src/policy/dlp/index.js';
import { loadDlpRules, parseDlpRules } from '../../../src/policy/dlp/rules.js';
import { passesLuhn } from '../../../src/policy/dlp/validators/card.js';
import { isAssignable } from '../../../src/policy/dlp/validators/ssn.js';

const scanner = new DlpScanner();

/** What the scanner reports in `text`, as `detector:value`. */
function found(text: string, on: DlpScanner = scanner): string[] {
  return on.scan(text).map((match) => `${match.detector}:${text.slice(match.start, match.end)}`);
}

/** Asserts that each value, alone in a sentence, is found whole by `detector`, and each non-value is not found at all. */
function detects(t: Pick<typeof tap, 'same'>, detector: PiiDetectorId, values: readonly string[], nonValues: readonly string[]): void {
  for (const value of values) t.same(found(`see ${value} here`), [`${detector}:${value}`], value);
  for (const value of nonValues) t.same(found(`see ${value} here`), [], value);
}

function withLuhnDigit(body: string): string {
  for (let digit = 0; digit <= 9; digit++) if (passesLuhn(body + digit)) return body + digit;
  throw new Error('unreachable');
}

/** A Luhn-valid number of `length` digits starting with `prefix`. */
function card(prefix: string, length: number): string {
  return withLuhnDigit(prefix.padEnd(length - 1, '7'));
}

function ibanCheckDigits(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/g, (letter) => String(letter.charCodeAt(0) - 55));
  return String(98n - (BigInt(numeric) % 97n)).padStart(2, '0');
}

tap.test('card: Luhn', async (t) => {
  t.ok(passesLuhn('4111111111111111'));
  t.ok(passesLuhn('79927398713'));
  t.notOk(passesLuhn('4111111111111112'));
  t.notOk(passesLuhn('79927398710'));
});

tap.test('card: network prefixes with their own lengths', async (t) => {
  const cards = [
    card('4', 16), // Visa
    card('4', 19),
    card('51', 16), // Mastercard
    card('55', 16),
    card('2221', 16), // Mastercard 2-series, both ends
    card('2720', 16),
    card('34', 15), // Amex
    card('37', 15),
    card('6011', 16), // Discover
    card('65', 19),
    card('3528', 16), // JCB
    card('3589', 19),
    card('36', 14), // Diners
    card('62', 16), // UnionPay
    card('62', 19),
    card('6759', 16), // Maestro
    card('2200', 16), // Mir
  ];
  const outside = [
    card('4', 15), // Visa has 16 and 19 digits; 13-digit Visas are no longer issued
    card('4', 13),
    card('2220', 16), // just below the Mastercard 2-series
    card('2721', 16), // just above it
    card('34', 16), // Amex has 15 digits
    card('3527', 16), // just below JCB
    card('1', 16), // no network starts with 1, 7, 8, 9 or 0
    card('7', 16),
    card('9', 16),
  ];
  detects(t, 'pii.card', cards, outside);
  detects(t, 'pii.card', ['4111111111111111', '5500005555555559', '378282246310005', '6011111111111117', '3530111333300000', '36227206271667'], ['4111111111111112']);
});

tap.test('card: one separator throughout, in a usual grouping', async (t) => {
  detects(
    t,
    'pii.card',
    ['4111 1111 1111 1111', '4111-1111-1111-1111', '3782 822463 10005', '3782-822463-10005', '3622 720627 1667', `${card('4', 19).replace(/(\d{4})(?=\d{3})/g, '$1 ')}`],
    ['4111 1111-1111 1111', '4111-1111 1111-1111', '41111 1111 1111 111', '3782 8224 6310 005', '411 1111 1111 1111 1', '4111  1111 1111 1111'],
  );
  t.same(found('card 4111 1111 1111 1111 123, exp 12/27'), ['pii.card:4111 1111 1111 1111'], 'a trailing group is dropped');
  t.same(found('Card: 4111 1111 1111 1111 12/27'), ['pii.card:4111 1111 1111 1111'], 'an expiry after the number');
});

tap.test('card: boundaries, a card inside a longer run is no card', async (t) => {
  t.same(found('1234 4111 1111 1111 1111'), [], 'a run of four-digit groups');
  for (const text of ['x4111111111111111', '4111111111111111x', '14111111111111111', '41111111111111110000', '0.4111111111111111', '4111111111111111.25', 'id-4111111111111111', 'id_4111111111111111', '0x4111111111111111', '4111111111111111px', '#4111111111111111a']) {
    t.same(found(text), [], text);
  }
  for (const text of ['(4111111111111111)', 'card:4111111111111111,', '"4111111111111111"', '4111111111111111.', 'カード4111111111111111です']) {
    t.same(found(text), ['pii.card:4111111111111111'], text);
  }
});

tap.test('iban: country length and format, mod-97, compact and printed', async (t) => {
  const ibans = [
    'DE89370400440532013000',
    'GB29NWBK60161331926819',
    'FR1420041010050500013M02606',
    'NL91ABNA0417164300',
    'BE68539007547034', // 16, the shortest in the EU
    'NO9386011117947', // 15, the shortest anywhere
    'MT84MALT011000012345MTLCAST001S', // 31
    'BR1800360305000010009795493C1',
    'CH9300762011623852957',
    'ES9121000418450200051332',
  ];
  const printed = ibans.map((iban) => iban.replace(/(.{4})(?=.)/g, '$1 '));
  detects(t, 'pii.iban', [...ibans, ...printed], [
    'DE89370400440532013001', // mod-97 fails
    'DE8937040044053201300', // one short
    'XX89370400440532013000', // no such country
    'GB29NWBK6016133192681X', // GB's BBAN ends in digits
    'DE89 3704 0044 0532 0130 01',
    'DE89 37040044 05320130 00', // groups of four or none
  ]);
  t.same(found('DE8937040044053201300099'), [], 'longer than its country allows');
  t.same(found('IBAN GB29 NWBK 6016 1331 9268 19 BIC NWBKGB2L'), ['pii.iban:GB29 NWBK 6016 1331 9268 19'], 'a printed IBAN stops at its length');
  const bban = '539007547035'; // Belgian BBANs end in a mod-97 check of their own; this one's is off by one
  t.same(found(`BE${ibanCheckDigits('BE', bban)}${bban}`), [], 'national check digits are checked too');
});

tap.test('ssn: area, group and serial rules, known invalid numbers', async (t) => {
  t.ok(isAssignable('536228791'));
  for (const digits of ['000228791', '666228791', '900228791', '999228791', '536008791', '536220000']) t.notOk(isAssignable(digits), digits);
  detects(
    t,
    'pii.ssn',
    ['536-22-8791', '536 22 8791', '001-01-0001', '899-99-9999', '665-12-3456'],
    ['000-22-8791', '666-22-8791', '900-22-8791', '999-22-8791', '536-00-8791', '536-22-0000', '078-05-1120', '219-09-9999', '123-45-6789', '987-65-4321', '536-22 8791', '536 22-8791'],
  );
  t.same(found('2024-536-22-8791'), [], 'glued to a longer dashed run');
  t.same(found('536-22-87910'), []);
  t.same(found('12 536 22 8791'), [], 'part of a run of spaced numbers');
});

tap.test('ssn: a bare nine-digit run only right after an SSN keyword', async (t) => {
  t.same(found('order 536228791 shipped'), []);
  t.same(found('id=536228791'), []);
  for (const text of ['SSN: 536228791', 'ssn=536228791', '{"ssn": "536228791"}', 'Social Security Number 536228791', 'social_security_no: 536228791', 'SSN#536228791']) {
    t.same(found(text), ['pii.ssn:536228791'], text);
  }
  t.same(found('SSN: 666228791'), [], 'the rules still apply');
  t.same(found('SSN: 5362287910'), [], 'ten digits');
});

tap.test('email: ICANN public suffixes only', async (t) => {
  detects(
    t,
    'pii.email',
    ['jane.doe@example.com', 'priya.patel+billing@mail.example.co.uk', 'ops@eu.corp.acme.dev', 'x@studio.photography', 'first.middle.last@shop.com.au', 'a_b-c%d@example.org', 'JANE.DOE@EXAMPLE.COM', 'me@foo.github.io', '4155552671@txt.att.net'],
    ['user@localhost', 'x@y.invalidtld', 'icon@2x.png', 'name@file.png', 'admin@server.local', 'root@10.0.0.1', 'lodash@4.17.21', 'john..doe@example.com', 'jane.@example.com', 'jane@-example.com', 'jane@example..com'],
  );
  t.same(found('write to jane@example.com.'), ['pii.email:jane@example.com'], 'a full stop ends the sentence, not the address');
  t.same(found('write to jane@example.com.Thanks, J.'), ['pii.email:jane@example.com'], 'text running on after an address without a space');
  t.same(found('ask ops@corp.example.co.uk.Then reply'), ['pii.email:ops@corp.example.co.uk'], 'the longest public host is the address');
  t.same(found('ask anna@例え.jp.次'), ['pii.email:anna@例え.jp'], 'an internationalised host, cut at a label');
  t.same(found('see x@y.invalidtld.png or icon@2x.png.bak'), [], 'no public host left once labels are dropped');
  t.same(found('<jane@example.com>'), ['pii.email:jane@example.com']);
  t.same(found('mailto:jane@example.com?subject=hi'), ['pii.email:jane@example.com']);
  t.same(found('git clone git@github.com:acme/api.git'), [], 'an SCP-style remote is no address');
  t.same(found('follow @jane@mastodon.social'), [], 'a fediverse handle is no address');
  t.same(found('.jane@example.com'), [], 'no address starts with a dot');
  t.same(found(`${'a'.repeat(64)}@example.com`), [`pii.email:${'a'.repeat(64)}@example.com`]);
  t.same(found(`${'a'.repeat(65)}@example.com`), [], 'local parts have at most 64 characters');
});

tap.test('phone: international numbers, valid for their country', async (t) => {
  detects(
    t,
    'pii.phone',
    ['+44 20 7946 0958', '+1-415-555-2671', '+14155552671', '0044 20 7946 0958', '00442079460958', '+44 (0)20 7946 0958', '+33 6 12 34 56 78', '+91 98765 43210', '+81 3-1234-5678', '+49 30 12345678', '+55 11 91234-5678', '+61 412 345 678'],
    ['+44 20 7946 095', '+99 123 456 7890', '+1 111 111 1111', '+1 (555) 010-0199', '+49 0000 000000'],
  );
  t.same(found('call +44 20 7946 0958 2024'), ['pii.phone:+44 20 7946 0958'], 'a trailing group is dropped');
  t.same(found('@@ -120,7 +120,9 @@'), [], 'diff hunk ranges');
  t.same(found('6423 0039 0985 3371 2248'), [], 'without a +, 0039… inside a run of numbers is no international number');
  t.same(found('20 60 00 49 35 38 43 17'), []);
});

tap.test('phone: national formats of the configured regions', async (t) => {
  const national = [
    '(415) 555-2671', // US
    '415-555-2671',
    '415.555.2671',
    '1-415-555-2671',
    '020 7946 0958', // GB
    '07400 123456',
    '07400 123 456',
    '030 12345678', // DE
    '030 1234 5678',
    '030/12345678',
    '06 12 34 56 78', // FR
    '06.12.34.56.78',
    '98765 43210', // IN
    '098765 43210',
    '(11) 91234-5678', // BR
    '11 91234-5678',
    '03-1234-5678', // JP
    '090-1234-5678',
    '0412 345 678', // AU
    '(02) 1234 5678',
    '612 34 56 78', // ES
    '612 345 678',
    '06 1234 5678', // IT
    '347 123 4567',
    '020 123 4567', // NL
    '06-12345678',
    '(604) 555-0199', // CA
  ];
  const notPhones = [
    '(123) 456-7890', // no such area code
    '555-0100', // too short
    '20240315', // a date, and no trunk prefix
    '0924-1410-9384', // 09241 is the area code: not grouped like a number of it
    '078-05-1120', // SSN-shaped
    '912 34 5678',
    '000 000 0000',
    '1-800-000-0000',
  ];
  detects(t, 'pii.phone', national, notPhones);
});

tap.test('phone: timestamps, versions, addresses and ids are no numbers', async (t) => {
  for (const text of ['2024-03-15 10:22:33', '2024-03-15T10:22:33.123Z', '1710498153123', 'v10.15.3', '1.22.10', '192.168.100.200', '10.20.30.40', 'Order #415555267', 'PO 4500012345', '06 12 34 56 78 90 12', '12 34 56 78 90', 'ISBN 0-306-40615-2', '94105-1234', '2020-2024']) {
    t.same(found(text), [], text);
  }
});

tap.test('phone: a bare digit run only right after a phone keyword', async (t) => {
  t.same(found('id: 4155552671'), []);
  for (const [text, value] of [
    ['phone: 4155552671', '4155552671'],
    ['{"mobile":"07400123456"}', '07400123456'],
    ['Tel. 0612345678', '0612345678'],
    ['tel:+14155552671', '+14155552671'],
  ]) {
    t.same(found(text!), [`pii.phone:${value}`], text);
  }
});

tap.test('phone: the national regions come from the rules', async (t) => {
  const rules = loadDlpRules();
  const usOnly = parseDlpRules({ ...rules, detectors: { ...rules.detectors, 'pii.phone': { ...rules.detectors['pii.phone'], nationalRegions: ['US'] } } });
  const scanner = new DlpScanner(['pii.phone'], usOnly);
  t.same(found('(415) 555-2671 or 020 7946 0958', scanner), ['pii.phone:(415) 555-2671']);
  t.same(found('+44 20 7946 0958', scanner), ['pii.phone:+44 20 7946 0958'], 'international numbers need no region');
});

tap.test('where candidates compete, the longer wins, then the more confident', async (t) => {
  t.same(found('4111 1111 1111 1111'), ['pii.card:4111 1111 1111 1111'], 'a card is not also a phone number');
  t.same(found('text +14155552671@sms.example.com now'), ['pii.email:+14155552671@sms.example.com'], 'an address whose local part is a phone number');
  t.same(found('536 22 8791'), ['pii.ssn:536 22 8791']);
  t.same(found('to 4111111111111111@example.com'), ['pii.email:4111111111111111@example.com'], 'a longer finding replaces those it reaches back over');
  t.same(found('to DE89370400440532013000.4111111111111111@example.com'), ['pii.email:DE89370400440532013000.4111111111111111@example.com']);
  const matches = scanner.scan('a 4111111111111111 b jane@example.com c +44 20 7946 0958 d 536-22-8791 e DE89370400440532013000');
  t.same(
    matches.map((m) => m.detector),
    ['pii.card', 'pii.email', 'pii.phone', 'pii.ssn', 'pii.iban'],
  );
  for (let i = 1; i < matches.length; i++) t.ok(matches[i]!.start >= matches[i - 1]!.end, 'sorted, never overlapping');
  for (const match of matches) t.ok(match.confidence > 0 && match.confidence <= 1);
});

tap.test('only the enabled detectors run', async (t) => {
  const cardsOnly = new DlpScanner(['pii.card']);
  t.same(found('4111111111111111 jane@example.com 536-22-8791', cardsOnly), ['pii.card:4111111111111111']);
  t.same(new DlpScanner([]).scan('4111111111111111'), []);
});

tap.test('offsets are UTF-16 offsets into the string, whatever precedes the match', async (t) => {
  const texts = [
    '😀 4111111111111111',
    '你好，我的邮箱是 jane@example.com，电话 +44 20 7946 0958。',
    'café — naïve “quotes” 🚀🚀 536-22-8791 and 😀 DE89 3704 0044 0532 0130 00 😀',
    'x4111111111111111 é 4111111111111111', // the same text glued earlier, not a match
    '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 '.repeat(50) + 'jane@example.com ' + 'ü'.repeat(3000) + ' jane@example.com',
  ];
  for (const text of texts) {
    const expected = found(text.replace(/[^\x00-\x7f]/g, ' '));
    t.ok(expected.length > 0);
    t.same(found(text), expected, text.slice(0, 40));
  }
  t.same(scanner.scan('😀 4111111111111111')[0], { detector: 'pii.card', start: 3, end: 19, confidence: 0.9 });
});

tap.test('redact replaces each match with its detector id', async (t) => {
  const text = 'card 4111 1111 1111 1111, mail jane@example.com.';
  t.equal(redact(text, scanner.scan(text)), 'card [REDACTED:pii.card], mail [REDACTED:pii.email].');
  t.equal(redact(text, []), text);
  const a: DlpMatch = { detector: 'pii.card', start: 0, end: 4, confidence: 1 };
  const b: DlpMatch = { detector: 'pii.email', start: 2, end: 8, confidence: 1 };
  t.equal(redact('0123456789', [b, a]), '[REDACTED:pii.card]89', 'overlapping matches redact their union, in order');
  t.equal(redact('0123456789', [{ ...a, start: 4, end: 10 }]), '0123[REDACTED:pii.card]', 'up to the end');
});

tap.test('maxMatchLength is the longest candidate of the enabled detectors', async (t) => {
  t.equal(scanner.maxMatchLength, 254, 'an email address can be 254 characters');
  t.equal(new DlpScanner(['pii.card']).maxMatchLength, 23, '19 digits and 4 separators');
  t.equal(new DlpScanner(['pii.card', 'pii.ssn']).maxMatchLength, 47, 'a keyword, a gap and nine digits');
  t.equal(new DlpScanner([]).maxMatchLength, 0);
  const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
  t.equal(longest.length, 254);
  t.same(found(longest), [`pii.email:${longest}`]);
  t.same(found(`a${longest}`), [], 'one longer is not considered');
  for (const match of scanner.scan('SSN: 536228791 and social security number 536228791')) t.ok(match.end - match.start <= scanner.maxMatchLength);
});

tap.test('rules are validated when loaded, a phone region when a phone detector is made', async (t) => {
  const rules = loadDlpRules();
  const withPhone = (phone: object) => ({ ...rules, detectors: { ...rules.detectors, 'pii.phone': { ...rules.detectors['pii.phone'], ...phone } } });
  t.throws(() => parseDlpRules(withPhone({ candidate: ['(?<=x)\\d+'] })), /RE2/, 'lookbehind is not RE2');
  t.throws(() => parseDlpRules(withPhone({ nationalRegions: ['Germany'] })), /region/);
  const unknownRegion = parseDlpRules(withPhone({ nationalRegions: ['XX'] }));
  t.throws(() => new DlpScanner(['pii.phone'], unknownRegion), /XX is not a supported region/, 'a region libphonenumber does not know, once it is loaded for a phone detector');
  t.doesNotThrow(() => new DlpScanner(['pii.card'], unknownRegion), 'which a scanner without one never loads');
  t.throws(() => parseDlpRules(withPhone({ maxLength: 0 })));
  const card = rules.detectors['pii.card'];
  t.throws(() => parseDlpRules({ ...rules, detectors: { ...rules.detectors, 'pii.card': { ...card, networks: [{ name: 'x', prefixes: ['2720-2221'], lengths: [16] }] } } }));
  t.throws(() => parseDlpRules({ ...rules, version: 2 }));
});

tap.test('a scanner can be built and used in a worker thread', async (t) => {
  const { Worker } = await import('node:worker_threads');
  const module = new URL('../../../src/policy/dlp/index.ts', import.meta.url).href;
  const source = `import { parentPort } from 'node:worker_threads';
    const { DlpScanner } = await import('${module}');
    parentPort.postMessage(new DlpScanner().scan('card 4111111111111111').length);`;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`));
  const count = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  t.equal(count, 1);
  await worker.terminate();
});

tap.test('a long run of digits and dashes scans in linear time', async (t) => {
  // An unbounded email local part once made every candidate in such a run re-read the rest of it.
  let state = 7;
  const text = Array.from({ length: 512 * 1024 }, () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return '0123456789-'[state % 11];
  }).join('');
  const started = performance.now();
  scanner.scan(text);
  t.ok(performance.now() - started < 3000, `${Math.round(performance.now() - started)} ms for 512 KB`);
});

tap.test('real writing: lower-case and spaced IBANs, internationalised email hosts, German national numbers', async (t) => {
  detects(t, 'pii.iban', ['de89 3704 0044 0532 0130 00', 'de89370400440532013000', 'Gb29 nwbk 6016 1331 9268 19'], ['de89 3704 0044 0532 0130 01', 'ab12cdefghijklmnopqr']);
  detects(t, 'pii.email', ['user@bücher.de', 'jane.doe@müller-bau.example.de', 'anna@例え.jp'], ['user@bücher.invalidtld', 'icon@2x.png']);
  detects(t, 'pii.phone', ['0152 17096408', '(0221) 6709105', '0176 12345678'], ['0924-1410-9384']);
  t.same(found('Grüße — schreib an user@bücher.de oder ruf 0152 17096408 an'), ['pii.email:user@bücher.de', 'pii.phone:0152 17096408'], 'offsets stay right after non-ASCII text');
});
