import { api, type Me } from '../api';
import { h, int, ms, table } from '../dom';

interface Deployment {
  deployment: string;
  provider: string;
  weight: number;
  state: string;
  in_flight: number | null;
  latency_ms: number | null;
  today: { requests: number; errors: number; mean_latency_ms: number | null };
}
interface Model {
  id: string;
  context_length: number;
  pricing: { prompt: number; completion: number };
  today: Deployment['today'];
  /** Only for the operator and admin roles (an account sees its models, not the upstreams behind them). */
  deployments: Deployment[];
}

export async function modelsPage(main: HTMLElement, _me: Me): Promise<void> {
  const models = (await api<{ data: Model[] }>('GET', 'models')).data;
  const dash = () => document.createTextNode('—');
  const rows = models.flatMap((m) =>
    (m.deployments.length ? m.deployments : [null]).map((d, i) =>
      d === null
        ? [
            h('strong', {}, m.id),
            document.createTextNode(
              `${int(m.context_length)} ctx · ${m.pricing.prompt}/${m.pricing.completion} per token`,
            ),
            dash(),
            dash(),
            dash(),
            dash(),
            document.createTextNode(int(m.today.requests)),
            document.createTextNode(int(m.today.errors)),
            document.createTextNode(ms(m.today.mean_latency_ms)),
          ]
        : [
            i === 0 ? h('strong', {}, m.id) : document.createTextNode(''),
            document.createTextNode(
              i === 0 ? `${int(m.context_length)} ctx · ${m.pricing.prompt}/${m.pricing.completion} per token` : '',
            ),
            h('code', {}, d.deployment),
            h(
              'span',
              { class: `badge ${d.state === 'healthy' ? 'on' : d.state === 'unknown' ? '' : 'off'}` },
              d.state === 'cooling' ? 'cooling down' : d.state,
            ),
            document.createTextNode(d.in_flight === null ? '—' : String(d.in_flight)),
            document.createTextNode(ms(d.latency_ms)),
            document.createTextNode(int(d.today.requests)),
            document.createTextNode(int(d.today.errors)),
            document.createTextNode(ms(d.today.mean_latency_ms)),
          ],
    ),
  );
  main.append(
    h('header', { class: 'page-head' }, h('h1', {}, 'Models & deployments')),
    h(
      'section',
      { class: 'card' },
      table(
        [
          'Model',
          'Context · price',
          'Deployment',
          'Health',
          'In flight',
          'Latency (moving avg)',
          'Requests today',
          'Errors today',
          'Mean latency today',
        ],
        rows,
        { id: 'models-table' },
      ),
      h(
        'p',
        { class: 'muted' },
        "Health comes from this replica's circuit breaker (fallback plugin): a deployment that fails repeatedly cools down, then one probe request decides. Counts are all replicas', from the daily aggregates.",
      ),
    ),
  );
}
