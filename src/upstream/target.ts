import { InvalidRequestError, SvcError } from '../lib/errors.js';
import type { RuntimeConfig } from '../config/runtime.js';
import type { ResolvedModel } from './resolve.js';
import { PROVIDERS, type ProviderId } from './providers.js';

export type Wire = 'openai' | 'anthropic';

export interface UpstreamTarget {
  readonly origin: string;
  /** Path and query on the origin. */
  readonly path: string;
  /** Host name, for egress checks and traces. */
  readonly host: string;
  /** Authentication headers the proxy sets (the agent's own are never forwarded as-is). */
  readonly authHeaders: ReadonlyArray<readonly [string, string]>;
}

export class ProviderNotConfiguredError extends SvcError {
  constructor(provider: ProviderId, what: string) {
    super(`Provider '${provider}' is not configured on this gateway: ${what}.`, {
      code: 'provider_not_configured',
      status: 503,
      type: 'api_error',
    });
  }
}

export class WrongWireError extends SvcError {
  constructor(provider: ProviderId) {
    super(`Provider '${provider}' does not serve the Anthropic Messages API; call /v1/chat/completions for this model.`, {
      code: 'provider_not_supported',
      status: 501,
      type: 'invalid_request_error',
    });
  }
}

/**
 * The credential the proxy holds for each provider: the local config first, then the platform
 * env variable. Resolved once per configuration, not per request.
 */
export function resolvePlatformKeys(config: RuntimeConfig, env: NodeJS.ProcessEnv): ReadonlyMap<ProviderId, string> {
  const keys = new Map<ProviderId, string>();
  for (const spec of Object.values(PROVIDERS)) {
    const cred = config.providers[spec.id] as { apiKey?: string } | undefined;
    const key = cred?.apiKey ?? spec.envKeys.map((name) => env[name]).find((v) => v !== undefined && v.length > 0);
    if (key !== undefined) keys.set(spec.id, key);
  }
  return keys;
}

function stripTrailingSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

function authFor(wire: Wire, provider: ProviderId, key: string | undefined): Array<[string, string]> {
  if (key === undefined) return [];
  if (provider === 'azure_openai') return [['api-key', key]];
  if (wire === 'anthropic') return [['x-api-key', key]];
  return [['authorization', `Bearer ${key}`]];
}

/**
 * The client's query string appended to the target's path as it was sent, but for parameters the
 * target sets itself (Azure's `api-version`), which the gateway's value decides.
 */
export function withClientQuery(path: string, clientQuery: string): string {
  if (clientQuery === '') return path;
  const mark = path.indexOf('?');
  if (mark < 0) return `${path}?${clientQuery}`;
  const own = new Set(new URLSearchParams(path.slice(mark + 1)).keys());
  const kept = clientQuery.split('&').filter((pair) => !own.has(new URLSearchParams(pair).keys().next().value ?? ''));
  return kept.length === 0 ? path : `${path}&${kept.join('&')}`;
}

/**
 * A model name placed in an upstream URL path as one segment. Percent-encoding does not neutralise
 * `.` and `..` (URL parsers and servers resolve them as dot-segments), so a name that is one, holds
 * one between separators, or holds a separator is refused before any URL is built.
 */
export function pathSegment(model: string): string {
  if (model === '.' || model.includes('..') || /[/\\]/.test(model)) {
    throw new InvalidRequestError(`The model '${model}' cannot be used as a deployment name: it may not contain '..', '/' or '\\'.`, 'model');
  }
  return encodeURIComponent(model);
}

/**
 * Where a request goes and how it authenticates.
 * `suffix` is the route below `/v1` (`/chat/completions`, `/messages`, …).
 * `key` is the provider credential to send: the proxy's own, else the agent's.
 * `clientQuery` is the query string the agent sent (`beta=true`), without its `?`.
 */
export function buildTarget(
  config: RuntimeConfig,
  model: ResolvedModel,
  wire: Wire,
  suffix: string,
  key: string | undefined,
  clientQuery = '',
): UpstreamTarget {
  const provider = model.provider;
  let base: string;
  let path: string;
  if (config.upstreamUrl !== undefined) {
    // A self-hosted gateway (or a test's mock) that speaks every wire under /v1.
    base = config.upstreamUrl + '/v1';
    path = suffix;
  } else {
    if (wire === 'anthropic' && !provider.speaksAnthropic) throw new WrongWireError(provider.id);
    switch (provider.id) {
      case 'azure_openai': {
        const azure = config.providers.azure_openai;
        if (azure === undefined) throw new ProviderNotConfiguredError('azure_openai', 'no endpoint in the config');
        base = stripTrailingSlash(azure.endpoint) + '/openai';
        path =
          suffix === '/responses'
            ? `/v1/responses?api-version=${encodeURIComponent(azure.apiVersion)}`
            : `/deployments/${pathSegment(model.upstreamModel)}${suffix}?api-version=${encodeURIComponent(azure.apiVersion)}`;
        break;
      }
      case 'ollama': {
        const apiBase = stripTrailingSlash(config.providers.ollama?.apiBase ?? provider.baseUrl);
        base = apiBase.endsWith('/v1') ? apiBase : apiBase + '/v1';
        path = suffix;
        break;
      }
      default: {
        const cred = config.providers[provider.id] as { baseUrl?: string } | undefined;
        base = stripTrailingSlash(cred?.baseUrl ?? provider.baseUrl);
        path = suffix;
      }
    }
  }
  const url = parsedUrl(base + path);
  return {
    origin: url.origin,
    path: withClientQuery(url.pathAndQuery, clientQuery),
    host: url.host,
    authHeaders: authFor(wire, provider.id, key),
  };
}

interface ParsedUrl {
  readonly origin: string;
  readonly pathAndQuery: string;
  readonly host: string;
}

/** Upstream URLs parsed once each: a config has a handful (a route per provider, a deployment per model). */
const PARSED_URLS = new Map<string, ParsedUrl>();
/** Deployment names come from clients' model names: past this many, the cache starts over. */
const MAX_PARSED_URLS = 256;

function parsedUrl(text: string): ParsedUrl {
  let parsed = PARSED_URLS.get(text);
  if (parsed === undefined) {
    const url = new URL(text);
    parsed = { origin: url.origin, pathAndQuery: url.pathname + url.search, host: url.hostname };
    if (PARSED_URLS.size >= MAX_PARSED_URLS) PARSED_URLS.clear();
    PARSED_URLS.set(text, parsed);
  }
  return parsed;
}
