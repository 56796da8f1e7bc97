import { readFileSync } from 'node:fs';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import t from 'tap';
import { PII_DETECTOR_IDS } from '../../../src/config/settings.js';
import { evaluateCorpus, labelledSnippetSchema, type LabelledSnippet } from '../../../src/policy/dlp/evaluate.js';
import { DlpScanner } from '../../../src/policy/dlp/index.js';

const CORPUS = new URL('../../fixtures/dlp/corpus.jsonl', import.meta.url);
const MIN_PRECISION = 0.98;
const MIN_RECALL = 0.98;

const snippets: LabelledSnippet[] = readFileSync(CORPUS, 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => labelledSnippetSchema.parse(JSON.parse(line)));

const valuesOf = (detector: string): string[] => snippets.flatMap((snippet) => snippet.pii.filter((label) => label.detector === detector).map((label) => label.value));

t.test('the corpus: over 1,000 snippets, every detector in many forms, and hard negatives', async (t) => {
  t.ok(snippets.length >= 1000, `${snippets.length} snippets`);
  t.ok(snippets.filter((snippet) => snippet.pii.length === 0).length >= 300, 'negatives');
  for (const detector of PII_DETECTOR_IDS) t.ok(valuesOf(detector).length >= 200, `${detector} positives`);

  const ibans = valuesOf('pii.iban');
  t.ok(new Set(ibans.map((iban) => iban.slice(0, 2))).size >= 20, 'IBANs of 20 countries or more');
  t.ok(ibans.some((iban) => iban.includes(' ')) && ibans.some((iban) => !iban.includes(' ')), 'IBANs compact and printed');

  const cards = valuesOf('pii.card');
  for (const [network, prefix] of [['Visa', /^4/], ['Mastercard', /^(5[1-5]|2[2-7])/], ['Amex', /^3[47]/], ['Discover', /^6(011|4[4-9]|5)/], ['JCB', /^35/], ['Diners', /^3[0689]/], ['UnionPay', /^62/]] as const) {
    t.ok(cards.some((card) => prefix.test(card)), `${network} cards`);
  }
  t.ok(['', ' ', '-'].every((separator) => cards.some((card) => (separator === '' ? /^\d+$/.test(card) : card.includes(separator)))), 'cards compact, spaced and dashed');

  const phones = valuesOf('pii.phone');
  const international = phones.filter((phone) => /^(\+|00)/.test(phone));
  const regions = new Set(international.map((phone) => parsePhoneNumberFromString(phone.replace(/^00/, '+'))?.country));
  t.ok(regions.size >= 8, `international phones of ${regions.size} regions`);
  t.ok(phones.some((phone) => !/^(\+|00)/.test(phone)), 'phones in national formats');
});

t.test(`every detector has precision and recall of at least ${MIN_PRECISION} on the corpus`, async (t) => {
  const scores = evaluateCorpus(snippets, new DlpScanner());
  for (const detector of PII_DETECTOR_IDS) {
    const score = scores[detector];
    const summary = `${detector}: TP ${score.truePositives}, FP ${score.falsePositives}, FN ${score.falseNegatives}`;
    t.ok(score.precision >= MIN_PRECISION, `${summary}, precision ${score.precision.toFixed(4)}`);
    t.ok(score.recall >= MIN_RECALL, `${summary}, recall ${score.recall.toFixed(4)}`);
  }
});

t.test('a match is found again from maxMatchLength characters before its end, as a stream redactor holding that much back sees it', async (t) => {
  const scanner = new DlpScanner();
  let checked = 0;
  for (const { text } of snippets) {
    for (const match of scanner.scan(text)) {
      const from = Math.max(0, match.end - scanner.maxMatchLength);
      const again = scanner.scan(text.slice(from)).some((m) => m.detector === match.detector && m.start + from === match.start && m.end + from === match.end);
      if (!again) t.fail(`${match.detector} ${text.slice(match.start, match.end)} is lost in ${JSON.stringify(text.slice(from))}`);
      checked++;
    }
  }
  t.ok(checked >= 1000, `${checked} matches`);
});

t.test('evaluateCorpus counts true and false positives and misses per detector', async (t) => {
  const labelled: LabelledSnippet[] = [
    { text: 'card 4111 1111 1111 1111 and mail jane@example.com', pii: [{ detector: 'pii.card', value: ' 4111 1111 1111 1111 ' }] },
    { text: 'SSN 536-22-8791', pii: [{ detector: 'pii.ssn', value: '536-22-8791' }, { detector: 'pii.ssn', value: '536-22-8792' }] },
    { text: 'nothing here', pii: [] },
  ];
  const scores = evaluateCorpus(labelled, new DlpScanner());
  t.match(scores['pii.card'], { truePositives: 1, falsePositives: 0, falseNegatives: 0, precision: 1, recall: 1 }, 'a label matches modulo surrounding whitespace');
  t.match(scores['pii.email'], { truePositives: 0, falsePositives: 1, falseNegatives: 0, precision: 0, recall: 1 });
  t.match(scores['pii.ssn'], { truePositives: 1, falsePositives: 0, falseNegatives: 1, precision: 1, recall: 0.5 });
  t.match(scores['pii.phone'], { truePositives: 0, falsePositives: 0, falseNegatives: 0, precision: 1, recall: 1 });
});

t.test('corpus.jsonl is exactly what generate.mjs generates', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const generator = new URL('../../fixtures/dlp/generate.mjs', import.meta.url);
  const run = spawnSync(process.execPath, [generator.pathname], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stdout + run.stderr);
});
