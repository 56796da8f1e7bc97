import t from 'tap';
import { AggregatorRegistry, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../src/proxy/metric-series.js';

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));

t.test('a series histogram renders as Prometheus expects: cumulative buckets, a value on a bound counted in it, +Inf, sum and count', async (t) => {
  const registry = new Registry();
  const h = new SeriesHistogram('x_seconds', 'X.', ['route'], [0.1, 1], registry);
  const a = h.series('/a');
  for (const v of [0.05, 0.1, 0.5, 3]) a.observe(v);
  t.equal(h.series('/a'), a, 'one series per label set');
  t.same(lines(await registry.metrics(), 'x_seconds'), [
    'x_seconds_bucket{route="/a",le="0.1"} 2',
    'x_seconds_bucket{route="/a",le="1"} 3',
    'x_seconds_bucket{route="/a",le="+Inf"} 4',
    'x_seconds_sum{route="/a"} 3.65',
    'x_seconds_count{route="/a"} 4',
  ]);
  t.match(await registry.metrics(), /# TYPE x_seconds histogram/);
  t.throws(() => h.series('/a', 'extra'), RangeError, 'label values must match the label names');
  registry.resetMetrics();
  t.same(lines(await registry.metrics(), 'x_seconds'), [], 'reset forgets every series');
});

t.test('series counters of several registries are summed by the aggregator, label values escaped', async (t) => {
  const registries = [new Registry(), new Registry()];
  const counters = registries.map((r) => new SeriesCounter('y_total', 'Y.', ['provider', 'direction'], r));
  counters[0]!.series('openai', 'input').inc(3);
  counters[1]!.series('openai', 'input').inc(4);
  counters[1]!.series('a"b', 'output').inc();
  const aggregated = AggregatorRegistry.aggregate(await Promise.all(registries.map((r) => r.getMetricsAsJSON())));
  t.same(lines(await aggregated.metrics(), 'y_total'), ['y_total{provider="openai",direction="input"} 7', 'y_total{provider="a\\"b",direction="output"} 1']);
  t.throws(() => new SeriesCounter('y_total', 'again', [], registries[0]!), /already been registered/);
});
