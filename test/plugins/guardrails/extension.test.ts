import { expect } from 'chai';
import { ConfigError } from '../../../src/config/load';
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

  it('a policy naming a detector no plugin registers: start refuses the config, naming the check and the known ones', async () => {
    const upstream = await echoUpstream(1).start();
    const guard = (detector: string) => ({
      guardrails: {
        policies: {
          p: policy([
            ['email', 'both', 'redact'],
            [detector, 'input', 'block'],
          ]),
        },
      },
    });
    const employees = { use: require.resolve('./fixtures/employee-ids'), config: {} };
    try {
      let err: unknown;
      await startTestGateway(guardConfig(upstream, [guard('employe_id'), employees, 'routing'])).catch(
        (e) => (err = e),
      );
      expect(err).to.be.instanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).to.have.length(1);
      expect(problems[0].pointer).to.equal('/plugins/0/guardrails/policies/p/checks/1/detector');
      expect(problems[0].message).to.match(/^plugin 'guardrails': unknown detector 'employe_id'; known: .*employee_id/);
      // The same detector registered by a plugin later in the chain is known by then: the config starts.
      const gw = await startTestGateway(guardConfig(upstream, [guard('employee_id'), employees, 'routing']));
      await gw.stop();
    } finally {
      await upstream.stop();
    }
  });
});
