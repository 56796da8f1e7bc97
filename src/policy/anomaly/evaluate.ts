import { z } from 'zod';
import { ANOMALY_DETECTOR_IDS } from '../../config/settings.js';
import { inspectBody } from '../inspect.js';
import type { PolicyConfig } from '../policy-config.js';
import { ACT_CONFIDENCE } from './anomaly-policy.js';
import type { AnomalyDetectorId } from './finding.js';
import { extractHistory } from './history.js';
import { isJsonObject } from '../../lib/json.js';

/** A recorded tool-call history with what the detectors must make of it (test/fixtures/anomaly/). */
export const anomalyFixtureSchema = z.strictObject({
  name: z.string().min(1),
  wire: z.enum(['openai', 'anthropic', 'responses']),
  label: z.union([z.enum(ANOMALY_DETECTOR_IDS), z.literal('healthy')]),
  /** The number of tool calls by which the labelled detector must have fired (its third repetition for loops). */
  catchByCall: z.number().int().min(1).nullable(),
  description: z.string().min(1),
  body: z.looseObject({}),
});

export type AnomalyFixture = z.infer<typeof anomalyFixtureSchema>;

/** Whether a conversation item hands a tool result back (after which an agent sends its next request). */
function isResult(item: unknown, wire: AnomalyFixture['wire']): boolean {
  if (!isJsonObject(item)) return false;
  if (wire === 'openai') return item.role === 'tool';
  if (wire === 'responses') return item.type === 'function_call_output';
  return item.role === 'user' && Array.isArray(item.content) && item.content.some((b) => isJsonObject(b) && b.type === 'tool_result');
}

/**
 * Replays a fixture as its agent sent it, one request after each batch of tool results, and
 * returns for each detector that acted (confidence at or above ACT_CONFIDENCE) the number of tool
 * calls in the first request it acted on.
 */
export function replayFixture(fixture: AnomalyFixture, policy: PolicyConfig): Map<AnomalyDetectorId, number> {
  const key = fixture.wire === 'responses' ? 'input' : 'messages';
  const items = fixture.body[key] as unknown[];
  const firedAt = new Map<AnomalyDetectorId, number>();
  for (let end = 1; end <= items.length; end++) {
    if (!isResult(items[end - 1], fixture.wire) || isResult(items[end], fixture.wire)) continue;
    const request = structuredClone({ ...fixture.body, [key]: items.slice(0, end) });
    const calls = extractHistory(request).calls.length;
    for (const f of inspectBody(policy, request).anomaly?.findings ?? []) {
      if (f.confidence >= ACT_CONFIDENCE && !firedAt.has(f.detector)) firedAt.set(f.detector, calls);
    }
  }
  return firedAt;
}

export interface DetectorScore {
  readonly precision: number;
  readonly recall: number;
  /** Labelled fixtures caught by their `catchByCall`. */
  readonly inTime: number;
  readonly labelled: number;
}

/** Precision and recall per detector over labelled fixtures, plus how many loops were caught in time. */
export function scoreFixtures(fixtures: readonly AnomalyFixture[], policy: PolicyConfig): Record<AnomalyDetectorId, DetectorScore> {
  const fired = fixtures.map((f) => replayFixture(f, policy));
  const out = {} as Record<AnomalyDetectorId, DetectorScore>;
  for (const id of ANOMALY_DETECTOR_IDS) {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    let inTime = 0;
    fixtures.forEach((fixture, i) => {
      const at = fired[i]!.get(id);
      if (fixture.label === id) {
        if (at === undefined) fn++;
        else {
          tp++;
          if (fixture.catchByCall === null || at <= fixture.catchByCall) inTime++;
        }
      } else if (at !== undefined) fp++;
    });
    out[id] = { precision: tp + fp === 0 ? 1 : tp / (tp + fp), recall: tp + fn === 0 ? 1 : tp / (tp + fn), inTime, labelled: tp + fn };
  }
  return out;
}
