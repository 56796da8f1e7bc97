/**
 * `svc/client`: the data-plane client SDK (seed 002 "Client SDK surface"). See docs/client.md.
 */
export { SvcClient, DEFAULT_PROXY_URL, DEFAULT_CONTROL_PLANE_URL, type SvcClientOptions, type ChatOptions, type SvcClientEvents, type SvcClientEvent } from './client.js';
export { ChatStream, type ChatResult, type ChatDelta } from './chat-stream.js';
export { CircuitBreaker, isGatewayFailure, type BreakerOptions, type BreakerState, type BreakerTransition } from './breaker.js';
export { BUDGET_TTL_MS, type BudgetStatus, type BudgetPeriod } from './budget.js';
export { resolveContext, readSvcConfig, svcConfigPath, type RunContext, type CiContext, type CiProvider, type SvcConfig, type SvcConfigFile, type ResolveContextOptions } from './context.js';
export { POLICY_CODES, type Enforcement, type Verdict, type HijackEvent } from './outcomes.js';
export {
  SvcClientError,
  VerdictError,
  RequestRejectedError,
  UpstreamFailureError,
  GatewayUnreachableError,
  InvalidResponseError,
  CircuitOpenError,
  InvalidOptionsError,
  MessageConversionError,
  type SvcClientErrorCode,
} from './errors.js';
export {
  anthropicToOpenAI,
  openAIToAnthropic,
  type OpenAIMessage,
  type OpenAISystemMessage,
  type OpenAIUserMessage,
  type OpenAIAssistantMessage,
  type OpenAIToolMessage,
  type OpenAIToolCall,
  type OpenAITextPart,
  type OpenAIImagePart,
  type OpenAIRefusalPart,
  type AnthropicConversation,
  type AnthropicMessage,
  type AnthropicContentBlock,
  type AnthropicTextBlock,
  type AnthropicImageBlock,
  type AnthropicToolUseBlock,
  type AnthropicToolResultBlock,
  type AnthropicThinkingBlock,
} from './messages.js';
