import { createServer } from 'node:http';
import { TrackerHttp } from './functions/trackers/http.ts';
import { allowLoopbackPorts } from './local/loopback-ports.ts';
const body = JSON.stringify({ values: Array.from({ length: 100 }, (_, i) => ({ id: i, text: 'x'.repeat(150) })) });
const server = createServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(body); });
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;
allowLoopbackPorts(port);
const http = new TrackerHttp({ tracker: 'target', baseUrl: `http://127.0.0.1:${port}`, authorization: 'Basic x' });
const mins: number[] = [];
for (let round = 0; round < 8; round++) {
  const t = process.cpuUsage();
  for (let i = 0; i < 3000; i++) await http.request('GET', '/rest/api/3/x', { query: { a: 1 } });
  const u = process.cpuUsage(t);
  mins.push((u.user + u.system) / 1e6);
}
console.log(mins.sort().slice(0, 3).map((m) => m.toFixed(2)).join(' '));
server.close(); process.exit(0);
