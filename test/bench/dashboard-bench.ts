/**
 * `npm run bench`: the tenant dashboard's fan-out, as figures. DynamoDB Local in memory, the real gateway with N
 * dashboard sockets of one tenant (real WebSocket clients), and a run whose checkpoints the run journal writes
 * (`StoreRunJournal`, the engine's own path): the time from a checkpoint's write being done to its `run.phase`
 * frame arriving on every socket (the table query of the tenant's connections and N posts included).
 */
import WebSocket from 'ws';
import { http } from '../support/http.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const { startBenchTable } = await import('./bench-table.ts');
const { startGateway } = await import('../../local/gateway.ts');
const { createTenant, createUser } = await import('../../functions/services/operator.ts');
const { connectionPoster } = await import('../../functions/adapters/dashboard-channel.ts');
const { RunEventsNotifier } = await import('../../functions/adapters/run-events.ts');
const { StoreRunJournal } = await import('../../functions/adapters/run-journal.ts');
const { createRun } = await import('../support/runs.ts');

const SOCKETS = [1, 10, 50];
const EVENTS = 30;

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { n: s.length, p50: at(0.5), p95: at(0.95) };
}

const bench = await startBenchTable('bench', { DASHBOARD_MAX_PER_USER: '100' });
const store = bench.store;
const gateway = await startGateway({ port: 0 });
connectionPoster.use(gateway.websockets);
const tenant = await createTenant(store, { name: 'Bench' });
await createUser(store, {
  tenantId: tenant.id,
  email: 'ws@example.com',
  password: 'bench-password',
  role: 'owner',
});
const token = (
  await http(gateway.url, 'POST', '/api/auth/login', {
    body: { email: 'ws@example.com', password: 'bench-password' },
  })
).body.accessToken as string;
const project = await http(gateway.url, 'POST', '/api/projects', {
  token,
  body: { name: 'bench', sourceSystem: 'AZURE_DEVOPS', targetSystem: 'JIRA_CLOUD' },
});

/** Opens a socket; `arrivals` gets the receive time of each `run.phase` frame, by phase. */
function open(arrivals: Map<number, number[]>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(
      `${gateway.url.replace(/^http/, 'ws')}/api/ws?token=${encodeURIComponent(token)}`,
    );
    ws.on('message', (data) => {
      const at = performance.now();
      const frame = JSON.parse(data.toString()) as { type: string; phase?: number };
      if (frame.type === 'run.phase' && frame.phase !== undefined)
        arrivals.set(frame.phase, [...(arrivals.get(frame.phase) ?? []), at]);
    });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

console.log(
  `\nDashboard fan-out (DynamoDB Local in memory, local gateway sockets, ${new Date().toISOString()})\n`,
);
const notifier = new RunEventsNotifier(() => store);
const journal = new StoreRunJournal(store, notifier);
for (const n of SOCKETS) {
  const arrivals = new Map<number, number[]>();
  // One after another: one user's places are taken under a conditional write each (a burst would contend).
  const sockets: WebSocket[] = [];
  for (let i = 0; i < n; i++) sockets.push(await open(arrivals));
  const run = await createRun(store, tenant.id, project.body.id, 'FULL');
  const all: number[] = [];
  const last: number[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const phase = 2 + i;
    await journal.checkpoint(run, {
      from: { phase: phase - 1, index: 0 },
      to: { phase, index: 0 },
      progressPercent: 0,
    });
    const written = performance.now();
    while ((arrivals.get(phase)?.length ?? 0) < n) await new Promise((r) => setImmediate(r));
    const times = (arrivals.get(phase) ?? []).map((at) => at - written);
    all.push(...times);
    last.push(Math.max(...times));
  }
  const a = stats(all);
  const l = stats(last);
  console.log(
    `${`checkpoint -> socket, ${n} socket${n > 1 ? 's' : ''}`.padEnd(34)} n=${String(a.n).padStart(5)}  p50 ${a.p50.toFixed(1).padStart(6)} ms  p95 ${a.p95.toFixed(1).padStart(6)} ms  (last socket p50 ${l.p50.toFixed(1)} ms, p95 ${l.p95.toFixed(1)} ms)`,
  );
  for (const ws of sockets) ws.close();
  while ((await store.dashboardConnections.listByTenant(tenant.id, 0)).length > 0)
    await new Promise((r) => setTimeout(r, 20));
}

connectionPoster.use(undefined);
await gateway.close();
await bench.stop();
process.exit(0);
