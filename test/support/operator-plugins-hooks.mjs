// Module hooks (node:module register) for ./operator-plugins-preload.ts: the plugin registry resolves to the
// test's definitions (https://nodejs.org/docs/latest-v20.x/api/module.html#resolvespecifier-context-nextresolve).
const REGISTRY = '/functions/plugins/index.ts';
const TEST_REGISTRY = new URL('./operator-plugins.ts', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  return new URL(resolved.url).pathname.endsWith(REGISTRY) ? { ...resolved, url: TEST_REGISTRY } : resolved;
}
