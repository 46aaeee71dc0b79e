/** The plugins the operator enabled for this tenant (each adds a run phase after the core ones). */
import { Card, SimpleGrid, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { pluginsQuery } from './api';

export function PluginsPage() {
  const plugins = useQuery(pluginsQuery());
  return (
    <>
      <PageTitle>Plugins</PageTitle>
      <ErrorNotice error={plugins.error} />
      {plugins.data?.length === 0 && (
        <Text>No plugins are enabled for your account; your operator enables them.</Text>
      )}
      <SimpleGrid cols={{ base: 1, md: 3 }}>
        {(plugins.data ?? []).map((p) => (
          <Card withBorder key={p.pluginKey} component="article" aria-labelledby={`plugin-${p.pluginKey}`}>
            <Title order={2} size="h4" id={`plugin-${p.pluginKey}`}>
              {p.displayName}
            </Title>
            <Text size="sm">{p.description}</Text>
            <Text size="xs" mt="xs">
              Enabled {new Date(p.enabledAt).toLocaleDateString()}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
    </>
  );
}
