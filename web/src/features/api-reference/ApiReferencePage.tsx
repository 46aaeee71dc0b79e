/**
 * The API reference: the published OpenAPI document (GET /api/openapi.json) rendered as a list of operations,
 * each with who may call it, what it takes and answers, and the error codes it can answer.
 */
import { Accordion, Badge, Code, Group, Stack, Text, TextInput } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { openApiDocumentQuery } from './api';

export function ApiReferencePage() {
  const doc = useQuery(openApiDocumentQuery());
  const [filter, setFilter] = useState('');
  const ops = Object.entries(doc.data?.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ path, method, op })),
  );
  const shown = ops.filter(({ path, op }) =>
    `${path} ${op.summary ?? ''}`.toLowerCase().includes(filter.trim().toLowerCase()),
  );
  return (
    <>
      <PageTitle>API reference</PageTitle>
      <ErrorNotice error={doc.error} />
      {doc.data && (
        <Stack>
          <Text>
            {doc.data.info.title} {doc.data.info.version}: the OpenAPI 3.1 document is at{' '}
            <a href="/api/openapi.json">/api/openapi.json</a>. {doc.data.info.description}
          </Text>
          <TextInput
            label="Filter operations"
            value={filter}
            onChange={(e) => setFilter(e.currentTarget.value)}
          />
          <Accordion multiple variant="separated" data-testid="api-operations">
            {shown.map(({ path, method, op }) => (
              <Accordion.Item key={`${method} ${path}`} value={`${method} ${path}`}>
                <Accordion.Control>
                  <Group gap="sm" wrap="nowrap">
                    <Badge color="dark" variant="outline" w={70}>
                      {method.toUpperCase()}
                    </Badge>
                    {/* A long path keeps its width (a squeezed one becomes a scroll box a keyboard cannot reach). */}
                    <Code style={{ flexShrink: 0 }}>{path}</Code>
                    <Text size="sm">{op.summary}</Text>
                  </Group>
                </Accordion.Control>
                <Accordion.Panel>
                  <Text size="sm">
                    Roles: {op['x-roles']?.length ? op['x-roles'].join(', ') : 'public (no token)'}
                  </Text>
                  {op.parameters?.length ? (
                    <Text size="sm">
                      Parameters:{' '}
                      {op.parameters
                        .map((p) => `${p.name} (${p.in}${p.required ? ', required' : ''})`)
                        .join('; ')}
                    </Text>
                  ) : null}
                  {op.requestBody?.content?.['application/json'] && (
                    <>
                      <Text size="sm" mt="xs">
                        Request body:
                      </Text>
                      <Code block>
                        {JSON.stringify(op.requestBody.content['application/json'].schema, null, 2)}
                      </Code>
                    </>
                  )}
                  <Text size="sm" mt="xs">
                    Answers: {Object.keys(op.responses ?? {}).join(', ')}
                  </Text>
                  <Text size="sm">Error codes: {(op['x-error-codes'] ?? []).join(', ')}</Text>
                </Accordion.Panel>
              </Accordion.Item>
            ))}
          </Accordion>
        </Stack>
      )}
    </>
  );
}
