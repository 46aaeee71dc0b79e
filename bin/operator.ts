/**
 * The operator CLI's entry (`npm run operator -- ...`): runs it (bin/operator/main.ts, where its commands and
 * targets are described) with the process's arguments, environment and output, and exits with its code.
 */
import { runOperator } from './operator/main.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const code = await runOperator({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exit(code);
