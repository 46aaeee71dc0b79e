/**
 * `npm run bench`: figures, never assertions. Starts DynamoDB Local in memory and the real gateway, then
 * measures the API paths the foundation owns. Later issues add the migration benchmark here.
 */
import { http } from '../support/http.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const { startBenchTable } = await import('./bench-table.ts');
const { startGateway } = await import('../../local/gateway.ts');
const { createTenant, createUser } = await import('../../functions/services/operator.ts');

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, mean, p50: at(0.5), p95: at(0.95) };
}

function row(label: string, samples: number[]) {
  const r = stats(samples);
  console.log(
    `${label.padEnd(42)} n=${String(r.n).padStart(4)}  mean ${r.mean.toFixed(1).padStart(6)} ms  p50 ${r.p50.toFixed(1).padStart(6)} ms  p95 ${r.p95.toFixed(1).padStart(6)} ms`,
  );
  return r;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const bench = await startBenchTable('bench');
const store = bench.store;
const tenant = await createTenant(store, { name: 'Bench' });
await createUser(store, {
  tenantId: tenant.id,
  email: 'bench@example.com',
  password: 'bench-password',
  role: 'owner',
});
const gateway = await startGateway({ port: 0 });
const call = (m: string, p: string, o = {}) => http(gateway.url, m, p, o);

console.log(`\nAPI benchmark (DynamoDB Local in memory, ${new Date().toISOString()})\n`);
const N = 40;
const wrong: number[] = [];
const unknown: number[] = [];
const ok: number[] = [];
for (let i = 0; i < N; i++) {
  // Interleaved so drift in machine load hits both series alike.
  wrong.push(
    await timed(() =>
      call('POST', '/api/auth/login', { body: { email: 'bench@example.com', password: 'wrong-password' } }),
    ),
  );
  unknown.push(
    await timed(() =>
      call('POST', '/api/auth/login', {
        body: { email: `nobody${i}@example.com`, password: 'wrong-password' },
      }),
    ),
  );
  ok.push(
    await timed(() =>
      call('POST', '/api/auth/login', { body: { email: 'bench@example.com', password: 'bench-password' } }),
    ),
  );
}
const w = row('login, wrong password (401)', wrong);
const u = row('login, unknown e-mail (401)', unknown);
row('login, success (200)', ok);
console.log(
  `${'  unknown/wrong p50 ratio'.padEnd(42)} ${(u.p50 / w.p50).toFixed(3)}  (1.000 = indistinguishable)`,
);

const token = (
  await call('POST', '/api/auth/login', { body: { email: 'bench@example.com', password: 'bench-password' } })
).body.accessToken;
const creates: number[] = [];
for (let i = 0; i < 100; i++) {
  creates.push(
    await timed(() =>
      call('POST', '/api/projects', {
        token,
        body: { name: `p${i}`, sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
      }),
    ),
  );
}
row('POST /api/projects', creates);
const lists: number[] = [];
for (let i = 0; i < 100; i++) lists.push(await timed(() => call('GET', '/api/projects', { token })));
row('GET /api/projects (100 projects)', lists);
const health: number[] = [];
for (let i = 0; i < 200; i++) health.push(await timed(() => call('GET', '/api/health')));
row('GET /api/health', health);

await gateway.close();
await bench.stop();
process.exit(0);
