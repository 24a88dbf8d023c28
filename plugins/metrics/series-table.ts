import type { Registry } from 'prom-client';

/** One exported value, as prom-client's registry formats it. */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * The series of a hot-path metric by label values (in label-name order), each made on first use: a lookup by one
 * string, with no label object or hashing per call as in prom-client's own metrics.
 */
export class SeriesTable<S> {
  private readonly series = new Map<string, S>();

  constructor(
    private readonly labelNames: readonly string[],
    private readonly make: (labels: Readonly<Record<string, string>>) => S,
  ) {}

  with(values: readonly string[]): S {
    const key = values.length === 1 ? values[0] : values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]));
      s = this.make(labels);
      this.series.set(key, s);
    }
    return s;
  }

  all(): IterableIterator<S> {
    return this.series.values();
  }
}

/** A hot-path metric registered with prom-client's registry: its series by label values, and its exposition. */
export abstract class FastMetric<S> {
  abstract readonly type: string;
  protected readonly series: SeriesTable<S>;

  constructor(
    readonly name: string,
    readonly help: string,
    labelNames: readonly string[],
    make: (labels: Readonly<Record<string, string>>) => S,
    registry: Registry,
  ) {
    this.series = new SeriesTable(labelNames, make);
    registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  /** The series for these label values (in labelNames order), made on first use. */
  with(...values: string[]): S {
    return this.series.with(values);
  }

  protected abstract samples(): Sample[];

  get(): { name: string; help: string; type: string; aggregator: string; values: Sample[] } {
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values: this.samples() };
  }
}
