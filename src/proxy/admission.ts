import { ByokRequiredError, ModelNotAllowedError } from '../lib/errors.js';
import type { RuntimeConfig } from '../config/runtime.js';
import { EgressDeniedError, EgressPolicy, type EgressDecision } from '../upstream/egress.js';
import type { ResolvedModel } from '../upstream/resolve.js';

/**
 * The cheap checks every request passes before it is inspected or sent, from the in-memory
 * config: the model is allowed, a credential is provisioned where the gateway requires one, and
 * the upstream host is within egress rules. Built once per config version.
 */
export class Admission {
  readonly egress: EgressPolicy;
  private readonly allowedModels: ReadonlySet<string> | null;

  constructor(private readonly config: RuntimeConfig) {
    const models = config.settings.allowedModels ?? [];
    this.allowedModels = models.length > 0 ? new Set(models) : null;
    this.egress = new EgressPolicy(config.settings.egressMode ?? config.egress.mode, [...config.egress.allow, ...(config.settings.egressAllow ?? [])]);
  }

  /** allowedModels matches the id as sent, without its provider prefix, or the catalog model it is a snapshot of. */
  checkModel(model: ResolvedModel): void {
    const allowed = this.allowedModels;
    if (allowed === null) return;
    if (allowed.has(model.requested) || allowed.has(model.upstreamModel) || (model.entry !== undefined && allowed.has(model.entry.id))) return;
    throw new ModelNotAllowedError(model.requested);
  }

  checkCredential(model: ResolvedModel): void {
    if (!this.config.byokRequired) return;
    if (this.config.providers[model.provider.id] === undefined) throw new ByokRequiredError(model.provider.id);
  }

  /** Refuses under enforce; under monitor the caller records the decision. */
  checkEgress(host: string): EgressDecision {
    const decision = this.egress.check(host);
    if (!decision.allowed && decision.mode === 'enforce') throw new EgressDeniedError(decision.host);
    return decision;
  }
}
