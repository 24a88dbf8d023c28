import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Registry } from 'prom-client';

/** Event-loop delay buckets (seconds): 1 ms (a healthy loop) to 2.5 s (a blocked one). */
export const LOOP_DELAY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * `gateway_event_loop_delay_seconds`: a Prometheus histogram of how late the event loop
 * ran a timer that wanted to run every `resolutionMs` (perf_hooks.monitorEventLoopDelay,
 * sampled in C++, nothing per request). At each scrape the samples gathered since the last
 * one are folded into cumulative bucket counts (by the monitor's own percentiles) and the
 * monitor is reset; the resolution itself is subtracted, so an idle loop reads about 0.
 */
export class LoopDelayHistogram {
  readonly name = 'gateway_event_loop_delay_seconds';
  readonly help =
    'How late the event loop ran a periodic timer (perf_hooks.monitorEventLoopDelay, resolution subtracted)';
  readonly type = 'histogram';
  private readonly monitor: IntervalHistogram;
  private readonly counts = LOOP_DELAY_BUCKETS.map(() => 0);
  private count = 0;
  private sum = 0;

  constructor(private readonly resolutionMs: number) {
    this.monitor = monitorEventLoopDelay({ resolution: resolutionMs });
    this.monitor.enable();
  }

  /** Fold what the monitor saw since the last call into the cumulative counts. */
  private fold(): void {
    const h = this.monitor;
    const n = h.count;
    if (n === 0) return;
    const offset = this.resolutionMs * 1e6;
    LOOP_DELAY_BUCKETS.forEach((le, i) => {
      this.counts[i] += Math.round((n * this.fractionAtMost(le * 1e9 + offset)) / 100);
    });
    this.count += n;
    this.sum += (n * Math.max(0, h.mean - offset)) / 1e9;
    h.reset();
  }

  /** The largest percentile (0..100) whose value is <= ns, by bisection on the monitor's percentiles. */
  private fractionAtMost(ns: number): number {
    const h = this.monitor;
    if (h.max <= ns) return 100;
    if (h.min > ns) return 0;
    let lo = 0;
    let hi = 100;
    for (let i = 0; i < 20; i++) {
      const mid = (lo + hi) / 2;
      if (h.percentile(mid) <= ns) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    this.fold();
    const values: Sample[] = LOOP_DELAY_BUCKETS.map((le, i) => ({
      labels: { le },
      value: this.counts[i],
      metricName: `${this.name}_bucket`,
    }));
    values.push({ labels: { le: '+Inf' }, value: this.count, metricName: `${this.name}_bucket` });
    values.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.count, metricName: `${this.name}_count` });
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }

  close(): void {
    this.monitor.disable();
  }

  register(registry: Registry): this {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
    return this;
  }
}
