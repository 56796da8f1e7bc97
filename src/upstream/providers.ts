/**
 * The eleven providers of seed 001, their credential field classes, and how the proxy talks to
 * each. Ids are the lower-case provider name, two-word names joined by an underscore.
 */

export type CredentialClass = 'key_only' | 'tenant_endpoint' | 'cloud_region' | 'cloud_project' | 'local';

export interface ProviderSpec {
  readonly id: ProviderId;
  readonly credentialClass: CredentialClass;
  /** Base URL that the route suffix (`/chat/completions`, `/messages`, …) is appended to. */
  readonly baseUrl: string;
  /** Whether the provider answers the Anthropic Messages API (`/messages`). */
  readonly speaksAnthropic: boolean;
  /** Whether the provider answers OpenAI-compatible routes. */
  readonly speaksOpenAI: boolean;
  /** Platform-key environment variables, first match wins. */
  readonly envKeys: readonly string[];
  /** Short alias accepted where a provider id is (fallback targets). */
  readonly alias?: string;
  /** Set when the proxy cannot call this provider yet; requests get 501 provider_not_supported. */
  readonly notSupported?: string;
}

export const PROVIDER_IDS = [
  'openai',
  'anthropic',
  'gemini',
  'mistral',
  'groq',
  'deepseek',
  'xai',
  'azure_openai',
  'aws_bedrock',
  'google_vertex',
  'ollama',
] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

const keyOnly = (id: ProviderId, baseUrl: string, envKeys: string[], speaksAnthropic = false): ProviderSpec => ({
  id,
  credentialClass: 'key_only',
  baseUrl,
  speaksAnthropic,
  speaksOpenAI: true,
  envKeys,
});

export const PROVIDERS: Readonly<Record<ProviderId, ProviderSpec>> = {
  openai: keyOnly('openai', 'https://api.openai.com/v1', ['OPENAI_API_KEY']),
  // Anthropic serves both its Messages API and an OpenAI-compatible chat endpoint.
  anthropic: keyOnly('anthropic', 'https://api.anthropic.com/v1', ['ANTHROPIC_API_KEY'], true),
  gemini: keyOnly('gemini', 'https://generativelanguage.googleapis.com/v1beta/openai', ['GEMINI_API_KEY', 'GOOGLE_API_KEY']),
  mistral: keyOnly('mistral', 'https://api.mistral.ai/v1', ['MISTRAL_API_KEY']),
  groq: keyOnly('groq', 'https://api.groq.com/openai/v1', ['GROQ_API_KEY']),
  deepseek: keyOnly('deepseek', 'https://api.deepseek.com/v1', ['DEEPSEEK_API_KEY']),
  xai: keyOnly('xai', 'https://api.x.ai/v1', ['XAI_API_KEY']),
  azure_openai: {
    id: 'azure_openai',
    credentialClass: 'tenant_endpoint',
    baseUrl: '',
    speaksAnthropic: false,
    speaksOpenAI: true,
    envKeys: ['AZURE_OPENAI_API_KEY'],
    alias: 'azure',
  },
  aws_bedrock: {
    id: 'aws_bedrock',
    credentialClass: 'cloud_region',
    baseUrl: '',
    speaksAnthropic: false,
    speaksOpenAI: false,
    envKeys: [],
    alias: 'bedrock',
    notSupported: 'AWS SigV4 request signing is not implemented yet.',
  },
  google_vertex: {
    id: 'google_vertex',
    credentialClass: 'cloud_project',
    baseUrl: '',
    speaksAnthropic: false,
    speaksOpenAI: false,
    envKeys: [],
    alias: 'vertex',
    notSupported: 'service-account token exchange is not implemented yet.',
  },
  ollama: {
    id: 'ollama',
    credentialClass: 'local',
    baseUrl: 'http://127.0.0.1:11434/v1',
    speaksAnthropic: false,
    speaksOpenAI: true,
    envKeys: [],
  },
};

const BY_ALIAS = new Map<string, ProviderSpec>(
  Object.values(PROVIDERS).flatMap((p) => (p.alias ? [[p.id, p], [p.alias, p]] : [[p.id, p]])),
);

/** A provider by id or short alias. */
export function providerById(idOrAlias: string): ProviderSpec | undefined {
  return BY_ALIAS.get(idOrAlias);
}
