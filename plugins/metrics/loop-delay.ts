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
 * ran a timer that wants to run every `resolutionMs` (the resolution itself subtracted, so an
 * idle loop reads about 0). One unref'd timer measures each lateness exactly and counts it
 * into its bucket at once: nothing per request, and no sample is lost between scrapes (the
 * perf_hooks monitor drops the first delay after a reset, so a block right after a scrape
 * went unseen).
 */
export class LoopDelayHistogram {
  readonly name = 'gateway_event_loop_delay_seconds';
  readonly help = 'How late the event loop ran a periodic timer (resolution subtracted)';
  readonly type = 'histogram';
  private readonly timer: NodeJS.Timeout;
  private readonly counts = LOOP_DELAY_BUCKETS.map(() => 0);
  private count = 0;
  private sum = 0;

  constructor(resolutionMs: number) {
    let last = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.observe(Math.max(0, now - last - resolutionMs) / 1000);
      last = now;
    }, resolutionMs);
    this.timer.unref();
  }

  private observe(seconds: number): void {
    for (let i = LOOP_DELAY_BUCKETS.length - 1; i >= 0 && seconds <= LOOP_DELAY_BUCKETS[i]; i--) this.counts[i]++;
    this.count++;
    this.sum += seconds;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
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
    clearInterval(this.timer);
  }

  register(registry: Registry): this {
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
    return this;
  }
}
