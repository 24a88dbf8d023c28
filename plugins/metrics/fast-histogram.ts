import type { Registry } from 'prom-client';
import { FastMetric, type Sample } from './series-table';

/** One label combination's buckets (not cumulative until exported). */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  /** `times` observations of the same value (a run of stream chunks that came together). */
  observe(seconds: number, times = 1): void {
    if (!Number.isFinite(seconds)) return;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (seconds <= b[i]) {
        this.counts[i] += times;
        break;
      }
    }
    this.sum += seconds * times;
    this.count += times;
  }
}

/**
 * A Prometheus histogram for the per-request hot path: a series is looked up once per
 * label combination (the caller keeps it, or looks it up by a string key) and an
 * observation is a bucket scan and two additions, with no label object, hashing or
 * closure per call as in prom-client's Histogram. Exported through prom-client's
 * registry in the same text format.
 */
export class FastHistogram extends FastMetric<HistogramSeries> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, (labels) => new HistogramSeries(labels, bounds), registry);
  }

  protected samples(): Sample[] {
    const values: Sample[] = [];
    for (const s of this.series.all()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.counts[i];
        values.push({ labels: { le, ...s.labels }, value: acc, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return values;
  }
}
