import type {
  AdminGuard,
  AuthThrottle,
  Authenticate,
  AuthenticateKey,
  ForgetKey,
  ModelsFilter,
  RouteGuard,
} from '../auth/contract';
import type { DeploymentHealth } from '../deployments/health';
import type { DeploymentMeasures } from '../deployments/measures';
import type { PresetBook } from '../models/presets';
import type { GatewayError } from '../errors';
import type { SmtpSettings } from '../mail/smtp';
import type { HttpObserver, ListeningHook, PluginTimer, ReadinessCheck } from './hooks';
import type { StoredResponses } from '../api/responses/contract';
import type { RemoteTools } from '../api/responses/remote-tools';
import type { Tracer } from '@opentelemetry/api';
import type { DetectorRegistry } from '../guardrails/contract';
import type { AdminSections } from '../api/admin-sections';

/**
 * What plugins offer one another through `services.shared`, by name and type. A plugin that
 * offers something new adds its slot by declaration merging:
 * `declare module 'model-gateway/plugin' { interface SharedSlots { 'my.thing': MyThing } }`.
 */
export interface SharedSlots {
  'auth.authenticate': Authenticate;
  'auth.authenticateKey': AuthenticateKey;
  'auth.forgetKey': ForgetKey;
  'auth.throttle': AuthThrottle;
  'models.guard': RouteGuard;
  'models.filter': ModelsFilter;
  'pipeline.timer': PluginTimer;
  'http.observer': HttpObserver;
  'ready.checks': ReadinessCheck[];
  'server.listening': ListeningHook[];
  'routing.health': DeploymentHealth;
  'routing.measures': DeploymentMeasures;
  'models.presets': PresetBook;
  'admin.guard': AdminGuard;
  'params.validate': ValidateChatRequest;
  'mail.smtp': SmtpSettings;
  'storage.responses': StoredResponses;
  'credit.charge': CreditCharge;
  /** The tracing plugin's OpenTelemetry tracer, for spans of work outside the chat chain (MCP tool calls). */
  'tracing.tracer': Tracer;
  'guardrails.detectors': DetectorRegistry;
  /** Remote MCP tools for Responses requests (the mcp plugin; src/api/responses/remote-tools.ts). */
  'tools.remote': RemoteTools;
  /** Plugins' settings sections for the console and other admin front ends (src/api/admin-sections.ts). */
  'admin.sections': AdminSections;
}
export const TRACER = 'tracing.tracer';

/**
 * A fixed charge outside the chat chain (a priced MCP tool call), made through the credit plugin's reservations so
 * that it can never overspend beside the requests in flight: `hold` reserves `amount` nano-credits on the account and
 * the key (throwing the 402 GatewayError a request would get when they cannot cover it) and answers `settle`, which
 * charges at most the hold (one ledger row) and releases the rest; settling twice charges once. Set by the credit
 * plugin; absent without it.
 */
export interface CreditCharge {
  hold(accountId: string, keyHash: string | null, amount: number): Promise<(charge: number) => Promise<void>>;
}
export const CREDIT_CHARGE = 'credit.charge';

/**
 * Every problem of a chat request (`request` the body's request fields, `options` its gateway fields), as the params
 * plugin checks it; `room` is the context length left beside the prompt, for the max_tokens bound. Set by the params
 * plugin; the fallback plugin checks a fallback entry's overrides with it.
 */
export type ValidateChatRequest = (
  request: unknown,
  options: Record<string, unknown>,
  room: () => number | null,
) => GatewayError[];
export const PARAMS_VALIDATE = 'params.validate';

/** A typed map of the slots: `get` answers the slot's type (or undefined when no plugin filled it). */
export interface SharedServices {
  get<K extends keyof SharedSlots>(key: K): SharedSlots[K] | undefined;
  set<K extends keyof SharedSlots>(key: K, value: SharedSlots[K]): void;
  has(key: keyof SharedSlots): boolean;
}

export function sharedServices(): SharedServices {
  const m = new Map<string, unknown>();
  return {
    get: <K extends keyof SharedSlots>(key: K) => m.get(key) as SharedSlots[K] | undefined,
    set: (key, value) => void m.set(key, value),
    has: (key) => m.has(key),
  };
}
