import { Counter, Gauge, type Registry } from '../metrics/prom-client';

export interface HealthOptions {
  /** Failures within `window_ms` that take a deployment out of rotation. */
  failures: number;
  window_ms: number;
  /** How long it stays out before one probe request may try it (half-open). */
  cooldown_ms: number;
}

type State = 'healthy' | 'cooling' | 'probing';

interface Entry {
  state: State;
  failures: number[];
  until: number;
  inFlight: number;
  /** Moving average of successful attempt latency, ms (0 = unknown). */
  latency: number;
}

const STATE_VALUE: Record<State, number> = { healthy: 0, cooling: 1, probing: 2 };

/**
 * Health of each deployment (`provider/model`): a circuit breaker (K failures in a window
 * -> cooling for a period -> one probe -> healthy or cooling again), plus the in-flight
 * count and a latency moving average that the routing strategies use. State is in /metrics.
 */
export class DeploymentHealth {
  private readonly entries = new Map<string, Entry>();
  private readonly stateGauge: Gauge;
  private readonly cooldowns: Counter;

  constructor(
    private readonly opts: HealthOptions,
    registry: Registry,
  ) {
    this.stateGauge = new Gauge({
      name: 'gateway_deployment_state',
      help: 'Deployment circuit state: 0 healthy, 1 cooling down, 2 probing',
      labelNames: ['deployment'],
      registers: [registry],
    });
    this.cooldowns = new Counter({
      name: 'gateway_deployment_cooldowns_total',
      help: 'Times a deployment was taken out of rotation',
      labelNames: ['deployment'],
      registers: [registry],
    });
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { state: 'healthy', failures: [], until: 0, inFlight: 0, latency: 0 };
      this.entries.set(key, e);
      this.stateGauge.set({ deployment: key }, 0);
    }
    return e;
  }

  private set(key: string, e: Entry, state: State): void {
    e.state = state;
    this.stateGauge.set({ deployment: key }, STATE_VALUE[state]);
  }

  /** May this deployment be tried now? A cooled-down one admits exactly one probe. */
  available(key: string, now = Date.now()): boolean {
    const e = this.entry(key);
    if (e.state === 'healthy') return true;
    if (e.state === 'cooling' && now >= e.until) return true;
    return false;
  }

  begin(key: string, now = Date.now()): void {
    const e = this.entry(key);
    e.inFlight++;
    if (e.state === 'cooling' && now >= e.until) this.set(key, e, 'probing');
  }

  end(key: string, ok: boolean, latencyMs: number, now = Date.now()): void {
    const e = this.entry(key);
    e.inFlight = Math.max(0, e.inFlight - 1);
    if (ok) {
      e.latency = e.latency === 0 ? latencyMs : e.latency * 0.8 + latencyMs * 0.2;
      e.failures = [];
      if (e.state !== 'healthy') this.set(key, e, 'healthy');
      return;
    }
    if (e.state === 'probing') return this.cool(key, e, now);
    e.failures = e.failures.filter((t) => t > now - this.opts.window_ms);
    e.failures.push(now);
    if (e.state === 'healthy' && e.failures.length >= this.opts.failures) this.cool(key, e, now);
  }

  private cool(key: string, e: Entry, now: number): void {
    e.until = now + this.opts.cooldown_ms;
    e.failures = [];
    this.cooldowns.inc({ deployment: key });
    this.set(key, e, 'cooling');
  }

  latency(key: string): number {
    return this.entry(key).latency;
  }

  inFlight(key: string): number {
    return this.entry(key).inFlight;
  }

  state(key: string): State {
    return this.entry(key).state;
  }
}

export const HEALTH = 'routing.health';
