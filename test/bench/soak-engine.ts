/**
 * The soak's engine (`npm run soak`, test/bench/soak.ts starts it as a child and SIGKILLs it at random points):
 * the local orchestrator (local/orchestrator.ts: the real ASL in aws-local-stepfunctions, the engine handler
 * in-process) on the soak's DynamoDB Local, resuming every run a killed predecessor left RUNNING as `npm start`
 * does (local/runtime.ts). Its environment comes from the soak: the table, the keys, the sandboxes' ports, and
 * DYNAMODB_THROTTLE_FAULTS (the SDK's injected throttling).
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

const { allowLoopbackPorts } = await import('../../local/loopback-ports.ts');
const { LocalOrchestrator } = await import('../../local/orchestrator.ts');
const { setOrchestrator } = await import('../../functions/services/migrations.ts');
const { store } = await import('../../functions/store/index.ts');

allowLoopbackPorts(...(process.env.SOAK_SANDBOX_PORTS ?? '').split(',').map(Number));
const orchestrator = new LocalOrchestrator();
setOrchestrator(orchestrator);
const resumed = await orchestrator.resumeInterrupted(store());
console.log(`soak-engine: resumed ${resumed.length} run(s)`);
// Lives until the soak ends it: a run's executions are promises only, and the next may not be started yet.
setInterval(() => undefined, 60_000);
