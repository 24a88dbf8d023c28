/**
 * @module
 * The gateway's own measurements of each deployment, for `provider.sort: "latency" | "throughput"` and `:nitro`:
 * latency (ms until the answer, or a stream's first byte) and throughput (output tokens a second), each a moving
 * average. Shared across replicas through the shared state (the store or Redis): each replica publishes what it
 * measured at most every `publishMs` per deployment, and a plan that sorts by a measurement reads what the others
 * published when its copy is older than `refreshMs`. Requests that do not sort by them never read the shared state.
 */
import type { SharedState } from '../pipeline/shared-state';

export interface MeasuresOptions {
  publishMs: number;
  refreshMs: number;
}

interface Measure {
  /** ms; 0 = not measured */
  latency: number;
  /** output tokens per second; 0 = not measured */
  throughput: number;
  /** When it last changed (epoch ms), here or on the replica that published it. */
  at: number;
}

const WEIGHT = 0.3;
const blend = (old: number, sample: number) => (old === 0 ? sample : old * (1 - WEIGHT) + sample * WEIGHT);
/** A published measurement is kept this long after its last update (a deployment nobody uses forgets it). */
const TTL_MS = 24 * 3600_000;

export class DeploymentMeasures {
  private readonly byKey = new Map<string, Measure>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private refreshedAt = 0;
  private refreshing: Promise<void> | undefined;

  constructor(
    /** Every configured deployment's key: what a refresh reads. */
    private readonly keys: readonly string[],
    private readonly state: SharedState | undefined,
    private readonly opts: MeasuresOptions,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  private entry(key: string): Measure {
    let m = this.byKey.get(key);
    if (!m) this.byKey.set(key, (m = { latency: 0, throughput: 0, at: 0 }));
    return m;
  }

  /** An answered attempt's latency (ms). */
  recordLatency(key: string, ms: number): void {
    if (!(ms > 0)) return;
    const m = this.entry(key);
    m.latency = blend(m.latency, ms);
    m.at = Date.now();
    this.publish(key);
  }

  /** An answer's output tokens over the seconds it took. */
  recordThroughput(key: string, tokens: number, ms: number): void {
    if (!(tokens > 0) || !(ms > 0)) return;
    const m = this.entry(key);
    m.throughput = blend(m.throughput, (tokens * 1000) / ms);
    m.at = Date.now();
    this.publish(key);
  }

  latency(key: string): number | undefined {
    return this.byKey.get(key)?.latency || undefined;
  }

  throughput(key: string): number | undefined {
    return this.byKey.get(key)?.throughput || undefined;
  }

  /** At most one write a deployment per publishMs: the latest value when the timer fires. */
  private publish(key: string): void {
    if (!this.state || this.pending.has(key)) return;
    const timer = setTimeout(() => {
      this.pending.delete(key);
      const m = this.byKey.get(key);
      if (m) this.state?.set(`m:${key}`, JSON.stringify(m), TTL_MS).catch(this.onError);
    }, this.opts.publishMs);
    timer.unref();
    this.pending.set(key, timer);
  }

  /** Read what other replicas published when this copy is older than refreshMs (one read at a time). */
  fresh(): Promise<void> | undefined {
    const state = this.state;
    if (!state || Date.now() - this.refreshedAt < this.opts.refreshMs) return undefined;
    this.refreshing ??= Promise.all(
      this.keys.map(async (key) => {
        const text = await state.get(`m:${key}`);
        if (!text) return;
        const theirs = JSON.parse(text) as Measure;
        const mine = this.entry(key);
        // The newer measurement wins: the replica that measured last saw the deployment as it is now.
        if (theirs.at > mine.at) Object.assign(mine, theirs);
      }),
    )
      .then(() => undefined, this.onError)
      .finally(() => {
        this.refreshedAt = Date.now();
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  close(): void {
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
  }
}

export const MEASURES = 'routing.measures';
