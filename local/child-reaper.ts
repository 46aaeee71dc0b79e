/**
 * A child process (DynamoDB Local's JVM, the sandboxes of a bench) must not outlive the process that started it:
 * ended by `process.exit` or by Ctrl-C, a bench left its children serving their ports until someone killed them.
 * A signal the host handles itself (npm start stops its children gracefully) is left to the host.
 */
import type { ChildProcess } from 'node:child_process';

export function endWithThisProcess(child: ChildProcess, ended: Promise<unknown>): void {
  let running = true;
  const reap = () => {
    if (running) child.kill('SIGKILL');
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 0) return;
    reap();
    // As if nobody had listened: the signal's default ends this process.
    process.kill(process.pid, signal);
  };
  process.once('exit', reap);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  void ended.then(() => {
    running = false;
    process.off('exit', reap);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  });
}
