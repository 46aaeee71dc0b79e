/**
 * The browser files' one Chromium (vitest.config.ts, project `browser`): launched once as a server, each file
 * connecting to it and working in a browser context of its own (its cookies, storage and pages: no file sees
 * another's). A launch and its first page cost about 2.7 CPU-s (the browser, GPU and network processes starting),
 * once per file before (docs/testing.md).
 */
import { type BrowserServer, chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { browserAvailable, CHROMIUM } from './browser.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared Chromium's endpoint for `chromium.connect`, or '' where there is no Chromium. */
    browserEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  let server: BrowserServer | undefined;
  if (browserAvailable)
    server = await chromium.launchServer({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  project.provide('browserEndpoint', server?.wsEndpoint() ?? '');
  return async () => {
    await server?.close();
  };
}
