/**
 * Server-Sent Events wire format (WHATWG HTML, "Server-sent events") for run events. Pure: the stream handler
 * writes what these return.
 */
import type { RunEvent } from './run-events.ts';

/**
 * One message: `id` (the client's Last-Event-ID on reconnect), `event` (the type, so `addEventListener(type)`
 * works) and the JSON with `type` repeated, as the spec asks. JSON has no raw newline, so one `data:` line.
 */
export function sseMessage(id: string, event: RunEvent): string {
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A comment line: clients ignore it, but it keeps proxies and idle timeouts from closing the connection. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** Tells the client how long to wait before reconnecting after the stream ends or breaks. */
export function sseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.round(ms))}\n\n`;
}
