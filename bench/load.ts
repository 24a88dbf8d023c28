import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  /** Latency percentiles in ms. */
  p50: number;
  p99: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Closed-loop load: `concurrency` workers send requests back to back for `seconds`. */
export async function runLoad(url: string, body: string, headers: Record<string, string>, concurrency: number, seconds: number): Promise<LoadResult> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await pool.request({ path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
        await res.body.text();
        if (res.statusCode !== 200) errors++;
      } catch {
        errors++;
      }
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, errors, seconds: elapsed, rps: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** Time to the first streamed content byte, over `count` sequential streaming requests; median ms. */
export async function timeToFirstToken(url: string, body: string, headers: Record<string, string>, count: number): Promise<number> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 1 });
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await pool.request({ path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    let seen = false;
    for await (const part of res.body) {
      if (!seen && (part as Buffer).toString().includes('"content":"Hello"')) {
        times.push(performance.now() - t0);
        seen = true;
      }
    }
    if (!seen) throw new Error('stream had no content');
  }
  await pool.close();
  times.sort((a, b) => a - b);
  return percentile(times, 50);
}
