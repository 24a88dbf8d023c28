import type { Registry } from 'prom-client';
import { SeriesTable, type Sample } from './series-table';

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
export class FastCounter {
  readonly type = 'counter';
  private readonly series: SeriesTable<CounterSeries>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    registry: Registry,
  ) {
    this.series = new SeriesTable(labelNames, (labels) => new CounterSeries(labels));
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series for these label values (in labelNames order), made on first use. */
  with(...values: string[]): CounterSeries {
    return this.series.with(values);
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    const values: Sample[] = [];
    for (const s of this.series.all()) values.push({ labels: s.labels, value: s.value, metricName: this.name });
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values };
  }
}
