/** Reading a /metrics text in the metrics plugin's tests. */

/** The samples of one metric, e.g. samples(text, 'gateway_requests_total'): each series' labels and value. */
export function samples(text: string, name: string): Array<{ labels: string; value: number }> {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => {
      const i = l.lastIndexOf(' ');
      return { labels: l.slice(name.length, i), value: Number(l.slice(i + 1)) };
    });
}

/** The sum of a metric's series whose labels include every part, e.g. value(text, name, 'model="m"'). */
export function value(text: string, name: string, ...parts: string[]): number {
  return samples(text, name)
    .filter((s) => parts.every((p) => s.labels.includes(p)))
    .reduce((a, s) => a + s.value, 0);
}

/** The gateway's own series (process metrics come and go with the runtime: GC kinds, heap spaces). */
export function series(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('gateway_'))
    .map((l) => l.slice(0, l.lastIndexOf(' ')));
}
