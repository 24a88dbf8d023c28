import { expect } from 'chai';
import { postJson, startTestGateway } from '../../helpers/gateway';
import { echoUpstream, guardConfig, policy, userText } from './helpers';

describe('guardrails: a detector from another plugin, and custom rules from YAML', function () {
  this.timeout(30000);

  it('a detector registered by an outside plugin (before or after guardrails in the chain) and custom rules', async () => {
    const upstream = await echoUpstream(2).start();
    const guard = {
      guardrails: {
        custom: [
          { id: 'codename', regex: 'project\\s+falcon', flags: 'i', label: 'CODENAME' },
          { id: 'banned', words: ['crimson tide', 'zebra'] },
        ],
        policies: {
          p: policy([
            ['employee_id', 'both', 'redact'],
            ['codename', 'input', 'redact'],
            ['banned', 'input', 'block'],
          ]),
        },
        default_policy: 'p',
      },
    };
    const employees = { use: require.resolve('./fixtures/employee-ids'), config: {} };
    for (const plugins of [
      [guard, employees, 'routing'],
      [employees, guard, 'routing'],
    ]) {
      const gw = await startTestGateway(guardConfig(upstream, plugins));
      try {
        const res = await postJson(`${gw.url}/v1/chat/completions`, {
          model: 'up/m',
          stream: true,
          messages: [{ role: 'user', content: 'EMP-123456 works on Project Falcon with EMP-654321' }],
        });
        const body = await res.text();
        expect(userText(upstream.requests.at(-1)!)).to.equal('[EMPLOYEE_1] works on [CODENAME_1] with [EMPLOYEE_2]');
        const text = body
          .split('\n\n')
          .filter((f) => f.startsWith('data: {'))
          .map(
            (f) =>
              (JSON.parse(f.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta
                .content ?? '',
          )
          .join('');
        expect(text).to.equal('You said: EMP-123456 works on Project Falcon with EMP-654321');
        const blocked = await postJson(`${gw.url}/v1/chat/completions`, {
          model: 'up/m',
          messages: [{ role: 'user', content: 'the Zebra crossing' }],
        });
        expect(blocked.status).to.equal(400);
        expect(
          (
            await postJson(`${gw.url}/v1/chat/completions`, {
              model: 'up/m',
              messages: [{ role: 'user', content: 'zebras' }],
            })
          ).status,
        ).to.equal(200);
      } finally {
        await gw.stop();
      }
    }
    await upstream.stop();
  });
});
