/**
 * Test only (the chaos soak, `npm run soak`; DYNAMODB_THROTTLE_FAULTS=`rate:seed`): answers a seeded share of the
 * client's DynamoDB calls with a throttling error before they are sent, inside the SDK's retry, so the SDK's own
 * retry (backoff, its retry quota) must carry the service through them as it does through AWS's throttling.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { envValue } from '#platform/env.ts';
import { logger } from '#platform/logger.ts';

/** The two throttling errors DynamoDB answers: a table's or index's capacity, and the account's request rate. */
const THROTTLES = [
  {
    name: 'ProvisionedThroughputExceededException',
    message: 'The level of configured provisioned throughput for the table was exceeded.',
  },
  { name: 'ThrottlingException', message: 'Rate of requests exceeds the allowed throughput.' },
] as const;

/** mulberry32: a small seeded generator, the same draws for the same seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Adds the injected throttling to `client` when DYNAMODB_THROTTLE_FAULTS is set; otherwise does nothing. */
export function addThrottleFaults(client: DynamoDBClient): void {
  const setting = envValue('DYNAMODB_THROTTLE_FAULTS');
  if (!setting) return;
  const [rate, seed] = setting.split(':').map(Number) as [number, number];
  const draw = seeded(seed);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (draw() >= rate) return next(args);
      const kind = THROTTLES[draw() < 0.5 ? 0 : 1];
      logger.warn('dynamodb throttle injected', { error: kind.name, command: context.commandName });
      throw Object.assign(new Error(kind.message), {
        name: kind.name,
        $fault: 'client',
        $metadata: { httpStatusCode: 400, attempts: 1 },
      });
    },
    // After the retry middleware (finalizeRequest, high): each attempt draws, and the SDK retries what it throws.
    { step: 'finalizeRequest', priority: 'low', name: 'soakThrottleFaults' },
  );
}
