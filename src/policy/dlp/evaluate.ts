import { z } from 'zod';
import { PII_DETECTOR_IDS, type PiiDetectorId } from '../../config/settings.js';
import type { DlpScanner } from './scanner.js';

/** One labelled text of a DLP corpus: every personal value in it, by detector. */
export const labelledSnippetSchema = z.strictObject({
  text: z.string(),
  pii: z.array(z.strictObject({ detector: z.enum(PII_DETECTOR_IDS), value: z.string().min(1) })),
});
export type LabelledSnippet = z.infer<typeof labelledSnippetSchema>;

export interface DetectorScore {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  /** TP / (TP + FP); 1 when the detector reported nothing. */
  precision: number;
  /** TP / (TP + FN); 1 when nothing was labelled. */
  recall: number;
}

export type CorpusScores = Record<PiiDetectorId, DetectorScore>;

/**
 * Scans every snippet and scores each detector: a match is a true positive when its detector
 * and its text (trimmed) equal a labelled value not yet matched in the same snippet.
 */
export function evaluateCorpus(snippets: readonly LabelledSnippet[], scanner: Pick<DlpScanner, 'scan'>): CorpusScores {
  const counts = Object.fromEntries(PII_DETECTOR_IDS.map((id) => [id, { truePositives: 0, falsePositives: 0, falseNegatives: 0 }])) as Record<
    PiiDetectorId,
    Omit<DetectorScore, 'precision' | 'recall'>
  >;
  for (const snippet of snippets) {
    const unmatched = snippet.pii.map((label) => ({ detector: label.detector, value: label.value.trim() }));
    for (const match of scanner.scan(snippet.text)) {
      const value = snippet.text.slice(match.start, match.end).trim();
      const labelIndex = unmatched.findIndex((label) => label.detector === match.detector && label.value === value);
      if (labelIndex < 0) {
        counts[match.detector].falsePositives++;
        continue;
      }
      counts[match.detector].truePositives++;
      unmatched.splice(labelIndex, 1);
    }
    for (const label of unmatched) counts[label.detector].falseNegatives++;
  }
  return Object.fromEntries(PII_DETECTOR_IDS.map((id) => [id, withRates(counts[id])])) as CorpusScores;
}

function withRates(count: Omit<DetectorScore, 'precision' | 'recall'>): DetectorScore {
  const reported = count.truePositives + count.falsePositives;
  const labelled = count.truePositives + count.falseNegatives;
  return {
    ...count,
    precision: reported === 0 ? 1 : count.truePositives / reported,
    recall: labelled === 0 ? 1 : count.truePositives / labelled,
  };
}
