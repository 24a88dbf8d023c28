import type { Registry } from 'prom-client';
import { FastMetric, type Sample } from './series-table';

/** One label combination's count. */
export class CounterSeries {
  value = 0;

  constructor(readonly labels: Readonly<Record<string, string>>) {}

  inc(by = 1): void {
    if (Number.isFinite(by) && by > 0) this.value += by;
  }
}

/**
 * A Prometheus counter for the per-request hot path (as FastHistogram): `with(...values).inc(n)`, exported through
 * prom-client's registry in the same text format as its Counter.
 */
export class FastCounter extends FastMetric<CounterSeries> {
  readonly type = 'counter';

  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super(name, help, labelNames, (labels) => new CounterSeries(labels), registry);
  }

  protected samples(): Sample[] {
    const values: Sample[] = [];
    for (const s of this.series.all()) values.push({ labels: s.labels, value: s.value, metricName: this.name });
    return values;
  }
}
