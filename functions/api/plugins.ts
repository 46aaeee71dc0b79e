/** GET /api/plugins: the plugins the operator enabled for the caller's tenant; never their configuration. */

import type * as z from 'zod';
import { createApiHandler, json, type Operation } from '#api/handler.ts';
import type * as R from '#api/responses.ts';
import { findPlugin } from '#domain/plugins.ts';
import { store } from '#store/index.ts';

const list: Operation = async (req) => {
  const enabled = await store().plugins.list(req.principal.tenantId);
  const records = enabled.flatMap((e) => {
    const plugin = findPlugin(e.pluginKey);
    // Named field by field: an enablement carries more than the caller may see.
    return plugin
      ? [
          {
            pluginKey: plugin.pluginKey,
            displayName: plugin.displayName,
            description: plugin.description,
            icon: plugin.icon,
            enabledAt: e.enabledAt,
          },
        ]
      : [];
  });
  return json(200, records satisfies z.input<typeof R.PluginSchema>[]);
};

export const handler = createApiHandler('plugins', { list });
