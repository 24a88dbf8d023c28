import { connect, type Socket } from 'node:net';
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

/** The middle value (the mean of the two middle ones for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CHUNKED_END = Buffer.from('0\r\n\r\n');

/**
 * One keep-alive HTTP/1.1 connection that sends a prepared request and reads whole answers
 * (Content-Length or chunked), wrk-style: far cheaper per request than a general client, so
 * that the load generator takes as little of the shared CPU as it can.
 */
class RawConnection {
  private socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: ((status: number) => void) | null = null;
  private failing: ((e: Error) => void) | null = null;

  constructor(
    port: number,
    private readonly request: Buffer,
  ) {
    this.socket = connect({ port, host: '127.0.0.1', noDelay: true });
    this.socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.parse();
    });
    const fail = (e: Error) => this.failing?.(e);
    this.socket.on('error', fail);
    this.socket.on('close', () => fail(new Error('connection closed')));
  }

  send(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failing = reject;
      this.socket.write(this.request);
    });
  }

  private parse(): void {
    const head = this.buf.indexOf(HEAD_END);
    if (head < 0 || !this.waiting) return;
    const headers = this.buf.toString('latin1', 0, head);
    const status = Number(headers.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(headers);
    let end: number;
    if (length) {
      end = head + 4 + Number(length[1]);
      if (this.buf.length < end) return;
    } else {
      const last = this.buf.indexOf(CHUNKED_END, head + 4);
      if (last < 0) return;
      end = last + CHUNKED_END.length;
    }
    this.buf = this.buf.subarray(end);
    const done = this.waiting;
    this.waiting = this.failing = null;
    done(status);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Closed-loop load: `concurrency` connections send requests back to back for `seconds`. */
export function runLoad(
  url: string,
  body: string,
  headers: Record<string, string>,
  concurrency: number,
  seconds: number,
  progress?: { requests: number },
): Promise<LoadResult> {
  return runLoadMix(url, [{ body, headers }], concurrency, seconds, progress);
}

/** One request of a mix: its body and headers (the key, say). */
export interface MixedRequest {
  body: string;
  headers: Record<string, string>;
}

/** The bytes of a POST of `r` to `u`. */
function rawRequest(u: URL, r: MixedRequest): Buffer {
  const head = Object.entries({
    host: u.host,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(r.body)),
    ...r.headers,
  })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return Buffer.from(`POST ${u.pathname} HTTP/1.1\r\n${head}\r\n${r.body}`);
}

/** runLoad over a mix of requests: connection i sends `mix[i % mix.length]` (many keys and models at once). */
export async function runLoadMix(
  url: string,
  mix: MixedRequest[],
  concurrency: number,
  seconds: number,
  progress?: { requests: number },
): Promise<LoadResult> {
  const u = new URL(url);
  const requests = mix.map((r) => rawRequest(u, r));
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const worker = async (i: number) => {
    const request = requests[i % requests.length];
    let conn = new RawConnection(Number(u.port), request);
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        if ((await conn.send()) !== 200) errors++;
      } catch {
        errors++;
        conn.close();
        conn = new RawConnection(Number(u.port), request);
      }
      latencies.push(performance.now() - t0);
      if (progress) progress.requests++;
    }
    conn.close();
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    seconds: elapsed,
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/** Time to the first streamed content byte, over `count` sequential streaming requests; median ms. */
export async function timeToFirstToken(
  url: string,
  body: string,
  headers: Record<string, string>,
  count: number,
): Promise<number> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 1 });
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await pool.request({
      path: u.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
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
