import { request } from 'undici';
import { PROVIDERS, type ProviderId } from '../../upstream/providers.js';

export interface VerifyResult {
  verified: boolean;
  /** The provider's HTTP status, when it answered. */
  status: number | null;
  message: string;
}

const AZURE_API_VERSION = '2024-10-21';

/**
 * Tests a credential against the provider's own API with a model listing, the cheapest
 * authenticated call each offers. `baseUrlOverride` replaces the provider's base URL.
 */
export async function verifyCredential(provider: ProviderId, fields: Record<string, string>, baseUrlOverride: string | undefined): Promise<VerifyResult> {
  const spec = PROVIDERS[provider];
  if (spec.notSupported !== undefined) return { verified: false, status: null, message: `cannot be verified yet: ${spec.notSupported}` };
  let url: string;
  const headers: Record<string, string> = {};
  if (provider === 'azure_openai') {
    url = `${baseUrlOverride ?? fields.endpoint!.replace(/\/+$/, '')}/openai/models?api-version=${AZURE_API_VERSION}`;
    headers['api-key'] = fields.apiKey!;
  } else if (provider === 'ollama') {
    url = `${baseUrlOverride ?? fields.apiBase!.replace(/\/+$/, '')}/models`;
  } else {
    url = `${baseUrlOverride ?? spec.baseUrl}/models`;
    if (provider === 'anthropic') {
      headers['x-api-key'] = fields.apiKey!;
      headers['anthropic-version'] = '2023-06-01';
    } else headers.authorization = `Bearer ${fields.apiKey}`;
  }
  try {
    const res = await request(url, { method: 'GET', headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
    await res.body.dump();
    if (res.statusCode >= 200 && res.statusCode < 300) return { verified: true, status: res.statusCode, message: 'the provider accepted the credential' };
    const message = res.statusCode === 401 || res.statusCode === 403 ? 'the provider rejected the credential' : `the provider answered ${res.statusCode}`;
    return { verified: false, status: res.statusCode, message };
  } catch (err) {
    return { verified: false, status: null, message: `the provider could not be reached: ${(err as Error).message}` };
  }
}
