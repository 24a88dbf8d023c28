import type * as Prom from 'prom-client';

type DefaultMetric = (registry: Prom.Registry, config: Record<string, unknown>) => void;

interface PromParts {
  Registry: typeof Prom.Registry;
  Counter: typeof Prom.Counter;
  Gauge: typeof Prom.Gauge;
  Histogram: typeof Prom.Histogram;
  collectDefaultMetrics(registry: Prom.Registry): void;
}

/** prom-client's default metrics, as its lib/defaultMetrics.js lists them, but for the CPU counters (see below). */
const DEFAULTS = [
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  'processResources',
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
];

/**
 * prom-client's Registry, Counter and Gauge and its default metrics, without its index: the index loads its
 * push gateway and cluster aggregator, and its default metrics load @opentelemetry/api (44 modules, for exemplars on
 * the CPU counters, which the gateway does not turn on) whether or not tracing is configured. The classes are the
 * same modules the index exports (one class each, whoever loads it). The CPU counters are written here with
 * prom-client's names, help and values. Should prom-client move these files, its index is used.
 */
function load(): PromParts {
  try {
    const lib = (path: string): unknown => require(`prom-client/lib/${path}`);
    const Counter = lib('counter') as typeof Prom.Counter;
    const metrics = DEFAULTS.filter((m) => m !== 'processResources' || 'getActiveResourcesInfo' in process).map(
      (m) => lib(`metrics/${m}`) as DefaultMetric,
    );
    return {
      Registry: lib('registry') as typeof Prom.Registry,
      Counter,
      Gauge: lib('gauge') as typeof Prom.Gauge,
      Histogram: lib('histogram') as typeof Prom.Histogram,
      collectDefaultMetrics(registry) {
        processCpu(Counter, registry);
        for (const m of metrics) m(registry, { register: registry, eventLoopMonitoringPrecision: 10 });
      },
    };
  } catch {
    const prom = require('prom-client') as typeof Prom;
    return {
      Registry: prom.Registry,
      Counter: prom.Counter,
      Gauge: prom.Gauge,
      Histogram: prom.Histogram,
      collectDefaultMetrics: (registry) => prom.collectDefaultMetrics({ register: registry }),
    };
  }
}

/** process_cpu_user_seconds_total, process_cpu_system_seconds_total and process_cpu_seconds_total, as prom-client's. */
function processCpu(Counter: typeof Prom.Counter, registry: Prom.Registry): void {
  let last = process.cpuUsage();
  const registers = [registry];
  // Registered first, its collect sets all three before any of them is read.
  const user = new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    collect() {
      const now = process.cpuUsage();
      const u = now.user - last.user;
      const s = now.system - last.system;
      last = now;
      user.inc(u / 1e6);
      system.inc(s / 1e6);
      total.inc((u + s) / 1e6);
    },
  });
  const system = new Counter({
    name: 'process_cpu_system_seconds_total',
    help: 'Total system CPU time spent in seconds.',
    registers,
  });
  const total = new Counter({
    name: 'process_cpu_seconds_total',
    help: 'Total user and system CPU time spent in seconds.',
    registers,
  });
}

export const { Registry, Counter, Gauge, Histogram, collectDefaultMetrics } = load();
export type Registry = Prom.Registry;
export type Counter<T extends string = string> = Prom.Counter<T>;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export type Histogram<T extends string = string> = Prom.Histogram<T>;
