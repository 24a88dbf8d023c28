/**
 * `npm run bench -- --long`: the full chain at c=32 for a long run (5 minutes by default),
 * sampled every few seconds: requests/s, RSS and the event-loop delay p99 of the window
 * (from the gateway_event_loop_delay_seconds histogram in /metrics), then the SQLite
 * DB+WAL bytes per 1,000 requests. Flat columns are the goal.
 */
import { runLoad } from './load';
import { dbBytes, rssMb, type Target } from './proc';

type Buckets = Map<number, number>;

/** Cumulative event-loop delay bucket counts (le in seconds -> count) from /metrics text. */
function loopBuckets(text: string): Buckets {
  const out: Buckets = new Map();
  for (const m of text.matchAll(/^gateway_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm))
    out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return out;
}

/** p99 of the samples between two scrapes: the first bucket bound holding 99% of them. */
function windowP99(before: Buckets, after: Buckets): string {
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return 'n/a';
  for (const [le, n] of [...after.entries()].sort((a, b) => a[0] - b[0])) {
    if (n - (before.get(le) ?? 0) >= 0.99 * total)
      return le === Infinity ? '> max bucket' : `<= ${(le * 1000).toFixed(1)} ms`;
  }
  return 'n/a';
}

export async function longRun(t: Target, body: string, seconds: number): Promise<string[]> {
  const metricsUrl = t.url.replace('/v1/chat/completions', '/metrics');
  const scrape = async () => loopBuckets(await (await fetch(metricsUrl)).text());
  const every = Math.max(5, Math.round(seconds / 20));
  const dbBefore = t.db ? dbBytes(t.db) : 0;
  const lines = [
    `long run: ${t.plugins?.join(' -> ')} at c=32 for ${seconds}s, sampled every ${every}s`,
    '',
    '| t s | req/s | RSS MB | event-loop delay p99 | DB+WAL MB |',
    '|---|---|---|---|---|',
  ];
  const progress = { requests: 0 };
  let last = { at: performance.now(), requests: 0, buckets: await scrape() };
  const started = performance.now();
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(async () => {
      const now = { at: performance.now(), requests: progress.requests, buckets: await scrape() };
      const rps = ((now.requests - last.requests) * 1000) / (now.at - last.at);
      const db = t.db ? (dbBytes(t.db) / 1e6).toFixed(1) : '-';
      lines.push(
        `| ${((now.at - started) / 1000).toFixed(0)} | ${rps.toFixed(0)} | ${rssMb(t.pid).toFixed(0)} | ${windowP99(last.buckets, now.buckets)} | ${db} |`,
      );
      process.stderr.write(`bench: long: ${lines[lines.length - 1]}\n`);
      last = now;
    });
  }, every * 1000);
  const r = await runLoad(t.url, body, t.headers, 32, seconds, progress);
  clearInterval(timer);
  await sampling;
  lines.push(
    '',
    `${r.requests} requests, ${r.errors} errors, ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`,
  );
  if (t.db) {
    const grown = dbBytes(t.db) - dbBefore;
    lines.push(
      `DB+WAL: ${(dbBytes(t.db) / 1e6).toFixed(1)} MB, grew ${(((grown / r.requests) * 1000) / 1024).toFixed(1)} KB per 1,000 requests`,
    );
    await new Promise((res) => setTimeout(res, 5000));
    lines.push(`DB+WAL 5 s after the load: ${(dbBytes(t.db) / 1e6).toFixed(1)} MB`);
  }
  return lines;
}
