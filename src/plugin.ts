/**
 * The public plugin API: `import { definePlugin, errors } from 'model-gateway/plugin'`.
 *
 * Everything a plugin needs from the core, and the only door into it: outside plugins import it as
 * `model-gateway/plugin`, built-in plugins as `../../src/plugin` (lint refuses any other core import from plugins/).
 * When the gateway loads a plugin it maps `model-gateway/plugin` to this very module (whether the gateway runs from
 * dist, under tsx, or as an installed package), so there is one module identity; errors are recognised by a brand as
 * well, so a plugin that bundles its own copy still works.
 *
 * This file holds the contract (definePlugin, the state, errors, the OpenAI types, provider adapters); the rest comes
 * in groups from ./plugin/: request (fields, tokens, bounds, plan), services (shared slots and hooks), accounts (the
 * admin wire format, keys, credits), http (body readers), store, providers (calling an upstream) and kit (ids, clock,
 * metrics, mail, CLI commands). Re-exports only: nothing here costs a request anything.
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
export type { CliCommand } from './cli/command';
export type { ConfigProblem } from './config/load';
export type {
  Attempt,
  AttemptPlan,
  AttemptRecord,
  CacheOutcome,
  ChatResult,
  GatewayRequestOptions,
  GatewayState,
  Principal,
  Role,
} from './pipeline/state';
export type { CounterValue, SharedState } from './pipeline/shared-state';
export type { AttemptGuard, AttemptGuards, AttemptTicket, AttemptUse, AttemptVerdict } from './pipeline/attempt-guards';
export { logSkipped } from './pipeline/attempt-guards';
export type { SharedServices, SharedSlots } from './pipeline/shared-services';
export { ChatStream, type ChunkSource, type StreamEnd, type StreamObserver } from './stream/chat-stream';
export {
  errors,
  GatewayError,
  isGatewayError,
  pluginCode,
  toGatewayError,
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
  InboundWire,
  LocalProvider,
  ProviderAdapter,
  SameWire,
  SameWireRequest,
  StreamFormat,
  StreamTranslator,
  UpstreamEvent,
  UpstreamRequest,
  UpstreamTarget,
} from './providers/types';
export type { RoutingStrategy, StrategyInput } from './deployments/strategies';
export type {
  CreditBoundConfig,
  DeploymentConfig,
  GatewayConfig,
  ModelConfig,
  PresetConfig,
  PricingConfig,
  ProviderConfig,
  ProviderPreferences,
} from './config/types';
export type { ModelRegistry } from './models/registry';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ChatRequest,
  CompletionChoice,
  ContentPart,
  FinishReason,
  ToolCall,
  Usage,
} from './types/openai';
/** Helpers the built-in adapters use to build OpenAI chunks, completions and usage: for adapter plugins. */
export * as adapterKit from './providers/shared';
export { upstreamStatusError } from './errors';

export * from './plugin/request';
export * from './plugin/services';
export * from './plugin/accounts';
export * from './plugin/http';
export * from './plugin/store';
export * from './plugin/providers';
export * from './plugin/kit';
