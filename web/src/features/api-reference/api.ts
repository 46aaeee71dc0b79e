/** The API reference's query: its cache key (`openApiKeys`) and the published document it reads. */
import { queryOptions } from '@tanstack/react-query';

export interface Operation {
  summary?: string;
  description?: string;
  operationId?: string;
  'x-roles'?: string[];
  'x-error-codes'?: string[];
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}
export interface Document {
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
}

export const openApiKeys = {
  all: ['openapi'] as const,
  document: () => [...openApiKeys.all, 'document'] as const,
};

/** GET /api/openapi.json, read once: the document changes only with a deployment. */
export const openApiDocumentQuery = () =>
  queryOptions({
    queryKey: openApiKeys.document(),
    queryFn: async () => {
      const res = await fetch('/api/openapi.json');
      if (!res.ok) throw new Error(`GET /api/openapi.json answered ${res.status}`);
      return (await res.json()) as Document;
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
