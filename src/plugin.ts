/**
 * The public plugin API: `import { definePlugin, errors } from 'model-gateway/plugin'`.
 *
 * Everything a plugin author needs and nothing else. When the gateway loads a plugin it
 * maps `model-gateway/plugin` to this very module (whether the gateway runs from dist,
 * under tsx, or as an installed package), so there is one module identity; errors are
 * recognised by a brand as well, so a plugin that bundles its own copy still works.
 */
export { definePlugin } from './pipeline/plugin';
export type {
  Capability,
  GatewayContext,
  GatewayMiddleware,
  Next,
  Plugin,
  PluginInstance,
  PluginServices,
  ProviderExtension,
  StateFor,
  StrategyExtension,
} from './pipeline/plugin';
export type {
  Attempt,
  AttemptPlan,
  AttemptRecord,
  ChatResult,
  GatewayRequestOptions,
  GatewayState,
  Principal,
} from './pipeline/state';
export type { CounterValue, SharedState } from './pipeline/shared-state';
export type { AttemptGuard, AttemptGuards, AttemptTicket, AttemptUse, AttemptVerdict } from './pipeline/attempt-guards';
export type { SharedServices, SharedSlots } from './pipeline/shared-services';
export type { ChatStream, StreamEnd, StreamObserver } from './stream/chat-stream';
export {
  errors,
  GatewayError,
  isGatewayError,
  pluginCode,
  ERROR_CODES,
  type ErrorCode,
  type ErrorType,
  type ForeignErrorCode,
  type GatewayErrorCode,
  type GatewayErrorInit,
} from './errors';
export type {
  AdapterContext,
  HttpProviderAdapter,
  LocalProvider,
  ProviderAdapter,
  StreamFormat,
  StreamTranslator,
  UpstreamEvent,
  UpstreamRequest,
  UpstreamTarget,
} from './providers/types';
export type { RoutingStrategy, StrategyInput } from './deployments/strategies';
export type { DeploymentConfig, GatewayConfig, ModelConfig, ProviderConfig } from './config/types';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ChatRequest,
  ContentPart,
  FinishReason,
  ToolCall,
  Usage,
} from './types/openai';
/** Helpers the built-in adapters use to build OpenAI chunks, completions and usage: for adapter plugins. */
export * as adapterKit from './providers/shared';
export { upstreamStatusError } from './errors';
/** A validator generated at build time (ajv's standalone code), as a built-in plugin's generated/*.ts exports. */
export type { Validator } from './validation/validator';
