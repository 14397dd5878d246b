import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration } from "prom-client";

/**
 * The process's one registry: every role in the process (an embedded gateway holds the index and the engine
 * too) adds its metrics here, and `/metrics` serves it whole. Metrics are created on first use and found again
 * on the next, so two gateways in one test process share them instead of failing on a duplicate name.
 */
export const metricsRegistry = new Registry();

let defaults = false;

/** Node's own metrics (event-loop lag, heap, GC, CPU) under their usual names; once per process. */
export function enableDefaultMetrics(): void {
  if (defaults) return;
  defaults = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

export function counter<L extends string>(config: Omit<CounterConfiguration<L>, "registers">): Counter<L> {
  return (metricsRegistry.getSingleMetric(config.name) as Counter<L> | undefined) ?? new Counter({ ...config, registers: [metricsRegistry] });
}

export function gauge<L extends string>(config: Omit<GaugeConfiguration<L>, "registers">): Gauge<L> {
  return (metricsRegistry.getSingleMetric(config.name) as Gauge<L> | undefined) ?? new Gauge({ ...config, registers: [metricsRegistry] });
}

export function histogram<L extends string>(config: Omit<HistogramConfiguration<L>, "registers">): Histogram<L> {
  return (metricsRegistry.getSingleMetric(config.name) as Histogram<L> | undefined) ?? new Histogram({ ...config, registers: [metricsRegistry] });
}

/**
 * Latency buckets in seconds, 1 ms to 10 min: a BM25 search on a small store and a whole Ask of a 7B model on
 * a busy GPU both land inside.
 */
export const SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 600];
