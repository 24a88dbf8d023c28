/**
 * The public plugin API, part "shared slots and hooks": the names and types of what plugins offer one another and
 * the core through `services.shared` (a plugin adds its own by declaration merging on `SharedSlots`), the hooks the
 * core calls, and the per-request extension keys. Re-exports only.
 */
export {
  ADMIN_GUARD,
  AUTH_THROTTLE,
  AUTHENTICATE,
  AUTHENTICATE_KEY,
  FORGET_KEY,
  getAuthenticate,
  MODELS_FILTER,
  MODELS_GUARD,
  type AdminGuard,
  type Authenticate,
  type AuthenticateKey,
  type AuthThrottle,
  type ForgetKey,
  type ModelsFilter,
  type RouteGuard,
} from '../auth/contract';
export {
  CREDIT_CHARGE,
  PARAMS_VALIDATE,
  TRACER,
  type CreditCharge,
  type ValidateChatRequest,
} from '../pipeline/shared-services';
export {
  ADMIN_SECTIONS,
  adminSections,
  type AdminSection,
  type AdminSections,
  type SectionAction,
  type SectionCaller,
  type SectionSubject,
  type SectionView,
  type SettingsField,
} from '../api/admin-sections';
export { hasRole, parseRole, requireRole, roleOf, roleRequired, ROLES } from '../auth/roles';
export { auditActor, recordAudit, type AuditChange } from '../auth/audit';
export { MAIL_SMTP } from '../mail/smtp';
export {
  addListeningHook,
  addPluginTimer,
  addReadinessCheck,
  HTTP_OBSERVER,
  type HttpObserver,
  type ListeningHook,
  type PluginTimer,
  type ReadinessCheck,
} from '../pipeline/hooks';
export { DeploymentHealth, HEALTH, type HealthOptions } from '../deployments/health';
export { deploymentKey, orderDeployments } from '../deployments/strategies';
export { DeploymentMeasures, MEASURES, type MeasuresOptions } from '../deployments/measures';
export { readPreferences, VARIANT_SORT, type Preferences, type SortBy } from '../deployments/preferences';
export { noProviderMatches, preferDeployments, type Excluded } from '../deployments/prefer';
export {
  REMOTE_TOOLS,
  type RemoteCallResult,
  type RemoteToolDecl,
  type RemoteTools,
  type RemoteToolSet,
} from '../api/responses/remote-tools';
export {
  INPUT_ITEMS,
  RESPONSE_SAVER,
  STORED_RESPONSES,
  STORED_VIEW,
  type ResponseSaver,
  type StoredResponse,
  type StoredResponses,
  type StoredView,
} from '../api/responses/contract';
export {
  detectorRegistry,
  GUARDRAIL_DETECTORS,
  type Detector,
  type DetectorMatch,
  type DetectorRegistry,
  type GuardrailEvent,
} from '../guardrails/contract';
