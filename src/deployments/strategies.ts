import type { DeploymentConfig, ModelConfig } from '../config/types';
import type { ChatRequest } from '../types/openai';
import type { DeploymentHealth } from './health';

export const BUILTIN_STRATEGIES = ['weighted', 'latency', 'least_busy', 'cost', 'priority'] as const;
export type Strategy = (typeof BUILTIN_STRATEGIES)[number];

/** What a strategy may look at besides the deployments: the model, the request, the prompt's size. */
export interface StrategyInput {
  model: ModelConfig;
  request: ChatRequest;
  /** The gateway's own count of the prompt's tokens. */
  promptTokens: number;
  /** Health per deployment key (`provider/model`): in-flight count, latency, availability. */
  health?: Pick<DeploymentHealth, 'latency' | 'inFlight' | 'available'>;
}

/**
 * A routing strategy from a plugin: the deployments in the order to try them. It may
 * leave some out (none left means the model cannot serve this request: 400 no_deployment).
 */
export type RoutingStrategy = (deployments: readonly DeploymentConfig[], input: StrategyInput) => DeploymentConfig[];

const custom = new Map<string, RoutingStrategy>();

/** Register a strategy under a name usable as `routing.strategy` (services.strategies.register). */
export function registerStrategy(name: string, strategy: RoutingStrategy): void {
  if ((BUILTIN_STRATEGIES as readonly string[]).includes(name)) throw new Error(`'${name}' is a built-in strategy`);
  const existing = custom.get(name);
  if (existing && existing !== strategy) throw new Error(`strategy '${name}' is already registered`);
  custom.set(name, strategy);
}

export function strategyNames(): string[] {
  return [...BUILTIN_STRATEGIES, ...custom.keys()];
}

export function deploymentKey(d: DeploymentConfig): string {
  return `${d.provider}/${d.model}`;
}

/** Weighted random order: the first is drawn by weight, the rest follow by weight too. */
export function weightedOrder<T extends { weight: number }>(
  items: readonly T[],
  random: () => number = Math.random,
): T[] {
  if (items.length <= 1) return [...items];
  const pool = [...items];
  const out: T[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((s, d) => s + d.weight, 0);
    let r = random() * total;
    let i = 0;
    while (i < pool.length - 1 && r >= pool[i].weight) {
      r -= pool[i].weight;
      i++;
    }
    out.push(pool.splice(i, 1)[0]);
  }
  return out;
}

const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/**
 * A model's deployments in the order to try them. Healthy ones first (in strategy order),
 * then the ones cooling down (a request still has somewhere to go when all are down).
 */
export function orderDeployments(
  deployments: readonly DeploymentConfig[],
  strategy: string,
  health: DeploymentHealth | undefined,
  random: () => number = Math.random,
  /** What a plugged strategy is given; made only for one (counting the prompt's tokens is not free). */
  input?: () => Omit<StrategyInput, 'health'>,
): DeploymentConfig[] {
  const plugged = custom.get(strategy);
  if (plugged && input) return plugged(deployments, { ...input(), ...(health ? { health } : {}) });
  // One deployment has one order, healthy or not (a cooling one is still tried last: it is also first).
  if (deployments.length === 1) return [deployments[0]];
  let ordered: DeploymentConfig[];
  const stable = (score: (d: DeploymentConfig) => number) =>
    deployments
      .map((d, i) => ({ d, i, s: score(d) }))
      .sort((a, b) => a.s - b.s || a.i - b.i)
      .map((x) => x.d);
  switch (strategy) {
    case 'priority':
      ordered = stable((d) => num(d.priority, 0));
      break;
    case 'cost':
      ordered = stable((d) => num(d.cost, 0));
      break;
    case 'latency':
      // Unknown latency sorts first, so every deployment gets measured.
      ordered = health ? stable((d) => health.latency(deploymentKey(d))) : [...deployments];
      break;
    case 'least_busy':
      ordered = health ? stable((d) => health.inFlight(deploymentKey(d))) : [...deployments];
      break;
    default:
      ordered = weightedOrder(deployments, random);
  }
  if (!health) return ordered;
  const up = ordered.filter((d) => health.available(deploymentKey(d)));
  return up.length === ordered.length ? ordered : [...up, ...ordered.filter((d) => !up.includes(d))];
}
