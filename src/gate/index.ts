/**
 * `svc/gate`: the pre-execution gate an agent runs before each tool body (seed 002). See docs/gate.md.
 */
export { Gate, install, active, wrapTool, wrapTools, svcHeaders, holdKey, holdMessage, canonicalJson, type GateConfig } from './gate.js';
export { GateClient, type GateClientConfig } from './client.js';
export {
  SvcGateRefusal,
  SvcGateHold,
  SvcGateEscalation,
  GATE_REFUSAL_CODES,
  READ_ONLY_TOOLS,
  COMMAND_SIZE_LIMIT,
  ARGUMENTS_SIZE_LIMIT,
  GATE_DEADLINE_MS,
  type GateRefusalCode,
} from './refusals.js';
export { checkCommand, checkImages, checkWrittenManifest, type ImageAllowlist, type ImageCheck } from './images.js';
export { classify, isDeploy, isTest, touchesInfra } from './commands.js';
export { loadSnapshot, parseRules, firstMatch, type Snapshot, type GateRule } from './snapshot.js';
