import { expect } from 'chai';
import { Registry } from 'prom-client';
import { startTestGateway, testConfig, postJson } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson } from '../../helpers/mock-upstream';
import { DeploymentHealth } from '../../../src/deployments/health';
import { orderDeployments, weightedOrder } from '../../../src/deployments/strategies';

const dep = (model: string, extra: Record<string, unknown> = {}) => ({ provider: 'p', model, weight: 1, ...extra });

describe('routing strategies', () => {
  it('weighted random follows the weights', () => {
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const counts: Record<string, number> = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++)
      counts[weightedOrder([dep('a', { weight: 3 }), dep('b', { weight: 1 })], random)[0].model]++;
    expect(counts.a / 4000).to.be.within(0.72, 0.78);
  });

  it('priority, lowest cost, lowest latency and least busy order as they say', () => {
    const h = new DeploymentHealth({ failures: 2, window_ms: 1000, cooldown_ms: 1000 }, new Registry());
    const ds = [
      dep('a', { priority: 2, cost: 1 }),
      dep('b', { priority: 1, cost: 3 }),
      dep('c', { priority: 3, cost: 2 }),
    ];
    expect(orderDeployments(ds, 'priority', h).map((d) => d.model)).to.deep.equal(['b', 'a', 'c']);
    expect(orderDeployments(ds, 'cost', h).map((d) => d.model)).to.deep.equal(['a', 'c', 'b']);
    for (const [m, ms] of [
      ['a', 50],
      ['b', 10],
      ['c', 30],
    ] as const) {
      h.begin(`p/${m}`);
      h.end(`p/${m}`, true, ms);
    }
    expect(orderDeployments(ds, 'latency', h).map((d) => d.model)).to.deep.equal(['b', 'c', 'a']);
    h.begin('p/b');
    h.begin('p/b');
    h.begin('p/a');
    expect(orderDeployments(ds, 'least_busy', h).map((d) => d.model)).to.deep.equal(['c', 'a', 'b']);
  });

  it('cooldown: K failures take a deployment out, one probe after the cooldown, back on success', () => {
    const h = new DeploymentHealth({ failures: 2, window_ms: 1000, cooldown_ms: 500 }, new Registry());
    const ds = [dep('a'), dep('b')];
    const t = Date.now();
    for (let i = 0; i < 2; i++) {
      h.begin('p/a', t);
      h.end('p/a', false, 1, t);
    }
    expect(h.state('p/a')).to.equal('cooling');
    expect(orderDeployments(ds, 'priority', h).map((d) => d.model)).to.deep.equal(['b', 'a']); // cooling ones last
    expect(h.available('p/a', t + 100)).to.equal(false);
    expect(h.available('p/a', t + 600)).to.equal(true);
    h.begin('p/a', t + 600);
    expect(h.state('p/a')).to.equal('probing');
    expect(h.available('p/a', t + 600)).to.equal(false); // one probe only
    h.end('p/a', true, 5, t + 610);
    expect(h.state('p/a')).to.equal('healthy');
  });

  it('through the gateway: a failing deployment goes into cooldown (visible in /metrics) and traffic moves to the other', async () => {
    const bad = await new MockUpstream().start();
    const good = await new MockUpstream().start();
    bad.handler = (_r, res) => sendJson(res, 500, { error: { message: 'x' } });
    good.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    const gw = await startTestGateway(
      testConfig({
        providers: [
          { name: 'bad', type: 'openai', api_base: `${bad.url}/v1` },
          { name: 'good', type: 'openai', api_base: `${good.url}/v1` },
        ],
        models: [
          {
            id: 'm',
            routing: { strategy: 'priority' },
            deployments: [
              { provider: 'bad', model: 'x', priority: 0 },
              { provider: 'good', model: 'y', priority: 1 },
            ],
          },
        ],
        plugins: [
          'metrics',
          {
            fallback: {
              num_retries: 1,
              backoff_base_ms: 1,
              cooldown: { failures: 2, window_ms: 10000, cooldown_ms: 60000 },
            },
          },
          'routing',
        ],
      }),
    );
    try {
      for (let i = 0; i < 5; i++)
        expect(
          (await postJson(`${gw.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x' }] }))
            .status,
        ).to.equal(200);
      expect(bad.requests).to.have.length(2); // then cooled down: not tried again
      expect(good.requests).to.have.length(5);
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).to.include('gateway_deployment_state{deployment="bad/x"} 1');
      expect(metrics).to.include('gateway_deployment_cooldowns_total{deployment="bad/x"} 1');
    } finally {
      await gw.stop();
      await bad.stop();
      await good.stop();
    }
  });
});
