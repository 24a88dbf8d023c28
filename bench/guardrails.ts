/**
 * The guardrails scenario of `npm run bench`: what a typical policy adds to a request, measured against the same
 * gateway without it. Two gateways on one loopback upstream (each its own process): `routing` alone, and a
 * `guardrails` policy that redacts e-mail, phone, cards and IBANs both ways, blocks secrets and flags injection on
 * input, then `routing`. The request is a ~1 KB prompt holding an e-mail address and a phone number (so the policy
 * redacts on the way up and restores on the way down); the streamed answer is the bench upstream's nine chunks.
 * Printed: CPU per request at c=8 (the process's, median of rounds taking the two in turn, and the paired difference)
 * and time to the first content byte of a streamed answer (median of 300 each, alternating). Also alone:
 * `npm run build && node dist/bench/guardrails.js`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { startGateway, startProcess } from './gateway-target';
import { median, percentile, runLoad } from './load';
import { cpuMs } from './proc';
import { builtinDetectors } from '../plugins/guardrails/detectors/builtin';
import { GuardRun } from '../plugins/guardrails/run';
import type { Check, RequestPolicy } from '../plugins/guardrails/policy';
import { StreamGuard } from '../plugins/guardrails/stream-guard';
import type { GatewayState } from '../src/pipeline/state';
import type { ChatCompletionChunk } from '../src/types/openai';

/** The policy an operator would start with (plugins/guardrails/README.md). */
const TYPICAL = {
  guardrails: {
    policies: {
      pii: {
        checks: [
          { detector: 'email', on: 'both', action: 'redact' },
          { detector: 'phone', on: 'both', action: 'redact' },
          { detector: 'payment_card', on: 'both', action: 'redact' },
          { detector: 'iban', on: 'both', action: 'redact' },
          { detector: 'secrets', on: 'input', action: 'block' },
          { detector: 'prompt_injection', on: 'input', action: 'flag' },
        ],
      },
    },
    default_policy: 'pii',
  },
};

const PROMPT =
  'Please draft a short, friendly reply to this customer message and keep our tone warm but precise. ' +
  'Customer: "Hi, I ordered the blue kettle two weeks ago (order 88213) and it still has not arrived. ' +
  'The tracking page has said in transit for nine days. I was told it would take three to five days. ' +
  'Could you check what is going on and let me know? You can reach me at jane.doe@example.com or on ' +
  '+44 20 7946 0958 in the afternoon. I would also like to know whether I can change the delivery address ' +
  'to my office, since I am rarely home during the day. Thanks, Jane." Our policy: refunds within 30 days, ' +
  'free re-delivery, and a 10% voucher for delays over a week. Mention the voucher, apologise once, and offer ' +
  'to change the address if she replies with the new one. Keep it under 120 words.';

const body = (stream: boolean) =>
  JSON.stringify({ model: 'bench/model', stream, messages: [{ role: 'user', content: PROMPT }] });

/** Time to the first content byte of a streamed answer, one request at a time; the times, in ms. */
async function firstContent(url: string, n: number): Promise<number[]> {
  const u = new URL(url);
  const pool = new Pool(u.origin, { connections: 1 });
  const times: number[] = [];
  const payload = body(true);
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await pool.request({
      path: u.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
    });
    let seen = false;
    for await (const part of res.body)
      if (!seen && /"content":"[^"]/.test((part as Buffer).toString())) {
        times.push(performance.now() - t0);
        seen = true;
      }
    if (!seen) throw new Error('stream had no content');
  }
  await pool.close();
  return times;
}

interface Side {
  name: string;
  url: string;
  pid: number;
  cpu: number[];
  ttft: number[];
}

export async function guardrailsScenario(seconds = 5, rounds = 3): Promise<string[]> {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  try {
    const up = await startProcess([join(__dirname, 'upstream.js')], process.env, children);
    const sides: Side[] = [];
    for (const [name, plugins] of [
      ['without', ['routing']],
      ['with', [TYPICAL, 'routing']],
    ] as const) {
      const dir = mkdtempSync(join(tmpdir(), `gw-bench-guard-${name}-`));
      dirs.push(dir);
      const gw = await startGateway(dir, up.url, [...plugins], children);
      sides.push({ name, url: `${gw.url}/v1/chat/completions`, pid: gw.child.pid!, cpu: [], ttft: [] });
    }
    for (const s of sides) await runLoad(s.url, body(false), {}, 8, seconds);
    for (let r = 0; r < rounds; r++)
      for (const s of sides) {
        const before = cpuMs(s.pid);
        const load = await runLoad(s.url, body(false), {}, 8, seconds);
        if (load.errors > 0) throw new Error(`guardrails bench, ${s.name}: ${load.errors} requests failed`);
        s.cpu.push(((cpuMs(s.pid) - before) * 1000) / load.requests);
      }
    for (let i = 0; i < 6; i++) for (const s of sides) s.ttft.push(...(await firstContent(s.url, 50)));
    return report(sides[0], sides[1]);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })), 1000);
  }
}

/** The typical policy as the plugin merges it (strictest first). */
function typicalPolicy(): RequestPolicy {
  const byId = new Map(builtinDetectors([], []).map((d) => [d.id, d]));
  const check = (rule: string, action: Check['action']): Check => ({ rule, action, detector: byId.get(rule)! });
  const both = ['email', 'phone', 'payment_card', 'iban'];
  return {
    input: [check('secrets', 'block'), ...both.map((r) => check(r, 'redact')), check('prompt_injection', 'flag')],
    output: both.map((r) => check(r, 'redact')),
    classifier: null,
  };
}

const WORDS = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'];

/**
 * The guard's own work for one request, in process (no sockets, so the shared machine's load moves it less than the
 * runs above): the prompt's input checks and redaction, then the bench upstream's streamed answer through the window.
 */
function guardWork(policy: RequestPolicy): number {
  const t0 = process.hrtime.bigint();
  const s = {} as GatewayState;
  const noop = { inc: () => undefined };
  const run = new GuardRun(policy, s, { actions: noop, classifier: noop } as never);
  run.scan(PROMPT, 'input');
  const guard = new StreamGuard(run, { matches: true, words: 0, max: 512 });
  for (const [i, w] of WORDS.entries()) {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [{ index: 0, delta: { content: w }, finish_reason: i === WORDS.length - 1 ? 'stop' : null }],
    } as ChatCompletionChunk;
    guard.onChunk(chunk);
  }
  return Number(process.hrtime.bigint() - t0) / 1000;
}

export function inProcess(): string {
  const policy = typicalPolicy();
  for (let i = 0; i < 3000; i++) guardWork(policy);
  const times: number[] = [];
  for (let i = 0; i < 5000; i++) times.push(guardWork(policy));
  times.sort((a, b) => a - b);
  const t0 = process.hrtime.bigint();
  let x = 0;
  for (let i = 0; i < 1_000_000; i++) x += i % 7;
  const loopUs = Number(process.hrtime.bigint() - t0) / 1000 + (x < 0 ? 1 : 0);
  return (
    `in process, the guard's own work a request (input checks of the 1 KB prompt, the nine-chunk answer through the ` +
    `window): median ${percentile(times, 50).toFixed(1)} us, p99 ${percentile(times, 99).toFixed(1)} us ` +
    `(machine check: 10^6 loop iterations ${loopUs.toFixed(0)} us)`
  );
}

function report(without: Side, withPolicy: Side): string[] {
  const p50 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const paired = without.cpu.map((c, i) => withPolicy.cpu[i] - c);
  return [
    'guardrails, a typical policy (redact e-mail/phone/card/IBAN both ways, block secrets, flag injection), a 1 KB ' +
      'prompt with an e-mail and a phone number, routing alone beside it:',
    '| gateway | CPU us/req at c=8 | TTFT p50 ms (streamed, 300) |',
    '|---|---|---|',
    `| routing | ${median(without.cpu).toFixed(0)} | ${p50(without.ttft).toFixed(3)} |`,
    `| guardrails -> routing | ${median(withPolicy.cpu).toFixed(0)} | ${p50(withPolicy.ttft).toFixed(3)} |`,
    `added CPU a request: ${median(paired).toFixed(0)} us (rounds ${paired.map((x) => x.toFixed(0)).join(', ')}); ` +
      `added time to first token: ${(p50(withPolicy.ttft) - p50(without.ttft)).toFixed(3)} ms`,
    inProcess(),
  ];
}

if (require.main === module)
  guardrailsScenario()
    .then((lines) => process.stdout.write(`${lines.join('\n')}\n`))
    .catch((e: unknown) => {
      process.stderr.write(`guardrails bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exitCode = 1;
    });
