/**
 * The `awslambda` global of Lambda's Node.js runtime, typed, with a local stand-in. In AWS the runtime defines
 * the global and this module hands it out untouched; offline and in tests there is none, so a shim is
 * installed: `streamifyResponse` marks the handler, and `HttpResponseStream.from` sets the status and headers
 * on the writable, which the local gateway makes the node:http ServerResponse itself. (It must not flush the
 * headers first: the status and headers set here would be lost.)
 */
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';

export interface ResponseMetadata {
  statusCode: number;
  headers?: Record<string, string>;
}

export type StreamingHandler<TEvent> = (
  event: TEvent,
  responseStream: Writable,
  context: Context,
) => Promise<void>;

export interface AwsLambdaRuntime {
  streamifyResponse<TEvent>(handler: StreamingHandler<TEvent>): StreamingHandler<TEvent>;
  HttpResponseStream: { from(writable: Writable, metadata: ResponseMetadata): Writable };
}

/** Marks a handler the shim streamified, so the gateway can refuse to stream a plain one. */
export const STREAMING = Symbol.for('tracker-migration.streaming');

const isServerResponse = (w: Writable): w is Writable & ServerResponse =>
  typeof (w as Partial<ServerResponse>).setHeader === 'function' && 'statusCode' in w;

const shim: AwsLambdaRuntime = {
  streamifyResponse: (handler) => Object.assign(handler, { [STREAMING]: true }),
  HttpResponseStream: {
    from(writable, metadata) {
      if (isServerResponse(writable) && !writable.headersSent) {
        writable.statusCode = metadata.statusCode;
        for (const [name, value] of Object.entries(metadata.headers ?? {})) writable.setHeader(name, value);
      }
      return writable;
    },
  },
};

// @types/aws-lambda types the global too, with a stricter stream type; ours is what the handlers rely on.
const holder = globalThis as unknown as { awslambda?: Partial<AwsLambdaRuntime> };
// Filled member by member, never replaced: the AWS SDK's invoke store puts an `awslambda` object of its own
// on the global (holding `InvokeStore`) when it loads, offline too.
holder.awslambda ??= {};
const runtime = holder.awslambda;
runtime.streamifyResponse ??= shim.streamifyResponse;
runtime.HttpResponseStream ??= shim.HttpResponseStream;

/** Lambda's own runtime object in AWS, the shim's members elsewhere. */
export const awslambda = runtime as AwsLambdaRuntime;

export const isStreamingHandler = (fn: unknown): boolean =>
  typeof fn === 'function' && (fn as unknown as Record<symbol, unknown>)[STREAMING] === true;
