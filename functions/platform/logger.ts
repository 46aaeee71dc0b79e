/**
 * Structured JSON logs (Powertools). Log lines name what happened and carry ids; request bodies, headers,
 * tokens and credentials are never passed to the logger.
 */
import { Logger } from '@aws-lambda-powertools/logger';

export const logger = new Logger({ serviceName: 'tracker-migration' });
