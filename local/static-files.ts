/**
 * Serves the built web console (web/dist) on the API's origin, so the refresh cookie stays first-party: a
 * file when one matches, else index.html (the single-page app routes itself), with the console's security
 * headers (lib/console-headers.ts). Hashed assets are cached for a year, index.html never.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { CONSOLE_HEADERS } from '../lib/console-headers.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

async function fileAt(root: string, pathname: string): Promise<string | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  const candidate = normalize(join(root, decoded));
  // Never outside the folder (`/../package.json`).
  if (candidate !== root && !candidate.startsWith(root + sep)) return undefined;
  const s = await stat(candidate).catch(() => undefined);
  return s?.isFile() ? candidate : undefined;
}

/** Answers a GET/HEAD for a console path; false when it is not one (the caller answers it). */
export async function serveConsole(
  root: string,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<boolean> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const index = join(root, 'index.html');
  const file = (await fileAt(root, pathname)) ?? (extname(pathname) ? undefined : index);
  if (!file || !(await stat(file).catch(() => undefined))) return false;
  const immutable = file.startsWith(join(root, 'assets') + sep);
  res.writeHead(200, {
    ...CONSOLE_HEADERS,
    'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
    'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
  });
  if (req.method === 'HEAD') {
    res.end();
    return true;
  }
  createReadStream(file).pipe(res);
  return true;
}
