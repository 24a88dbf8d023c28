import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';

/** Bucket counts of gateway_event_loop_delay_seconds (le -> cumulative count), and its _count and _sum. */
function loopDelay(text: string): { buckets: Map<string, number>; count: number; sum: number } {
  const buckets = new Map<string, number>();
  for (const m of text.matchAll(/^gateway_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\S+)$/gm))
    buckets.set(m[1], Number(m[2]));
  const one = (suffix: string) =>
    Number(new RegExp(`^gateway_event_loop_delay_seconds_${suffix} (\\S+)$`, 'm').exec(text)?.[1]);
  return { buckets, count: one('count'), sum: one('sum') };
}

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('metrics: event-loop delay histogram', () => {
  let gw: TestGateway;
  before(async () => {
    // The gateway runs in this process: blocking the test's loop blocks the gateway's.
    gw = await startTestGateway(testConfig({ plugins: [{ metrics: { loop_delay_resolution_ms: 5 } }, 'routing'] }));
  });
  after(() => gw.stop());
  const scrape = async () => (await fetch(`${gw.url}/metrics`)).text();

  it('is a cumulative Prometheus histogram whose buckets grow with le and end at _count', async () => {
    await new Promise((r) => setTimeout(r, 100));
    const text = await scrape();
    expect(text).to.include('# TYPE gateway_event_loop_delay_seconds histogram');
    const h = loopDelay(text);
    const counts = [...h.buckets.values()];
    expect(counts.length).to.equal(12);
    for (let i = 1; i < counts.length; i++) expect(counts[i]).to.be.at.least(counts[i - 1]);
    expect(h.buckets.get('+Inf')).to.equal(h.count);
    expect(h.count).to.be.greaterThan(0);
  });

  it('records a blocked loop in the buckets above the block, and only the samples since the last scrape', async () => {
    const before = loopDelay(await scrape());
    busy(400);
    await new Promise((r) => setTimeout(r, 30));
    const after = loopDelay(await scrape());
    const delta = (le: string) => after.buckets.get(le)! - before.buckets.get(le)!;
    expect(after.count).to.be.greaterThan(before.count);
    // The 400 ms block: at least one sample above 250 ms, none above 2.5 s.
    expect(delta('+Inf') - delta('0.25')).to.be.at.least(1);
    expect(delta('+Inf') - delta('2.5')).to.equal(0);
    expect(after.sum - before.sum).to.be.at.least(0.35);
    // A third scrape without a block adds no sample above 250 ms (each sample is counted once).
    await new Promise((r) => setTimeout(r, 50));
    const later = loopDelay(await scrape());
    expect(later.buckets.get('+Inf')! - later.buckets.get('0.25')!).to.equal(
      after.buckets.get('+Inf')! - after.buckets.get('0.25')!,
    );
  });
});
