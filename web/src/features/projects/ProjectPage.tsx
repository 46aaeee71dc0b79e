/** One project along its status flow: connect, scan, map, quote, delivery, run, history (a tab each). */
import { Alert, Group, Loader, Tabs, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useParams, useSearchParams } from 'wouter';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { StatusBadge } from '../../components/StatusBadge';
import { QuoteSection } from '../billing/QuoteSection';
import { ConnectSection } from '../connectors/ConnectSection';
import { ScanSection } from '../connectors/ScanSection';
import { MappingsSection } from '../mappings/MappingsSection';
import { RunsSection } from '../runs/RunsSection';
import { StartRunSection } from '../runs/StartRunSection';
import { projectQuery } from './api';
import { DeliverySection } from './DeliverySection';

const TABS = ['connect', 'scan', 'mappings', 'quote', 'delivery', 'start', 'runs'] as const;

export function ProjectPage() {
  const { projectId = '' } = useParams<{ projectId: string }>();
  const [params, setParams] = useSearchParams();
  const project = useQuery(projectQuery(projectId));
  const payment = params.get('payment');
  // Back from Checkout (`?payment=…`, functions/api/billing.ts): the quote says where the payment stands.
  const tab = TABS.find((t) => t === params.get('tab')) ?? (payment ? 'quote' : 'connect');
  if (project.isLoading) return <Loader aria-label="Loading the project" />;
  if (!project.data) return <ErrorNotice error={project.error} title="Could not load the project" />;
  const p = project.data;
  return (
    <>
      <Group justify="space-between" align="baseline">
        <PageTitle>{p.name}</PageTitle>
        <StatusBadge status={p.status} />
      </Group>
      {p.description && <Text mb="md">{p.description}</Text>}
      {payment === 'success' && (
        <Alert color="green" mb="md" title="Payment received">
          Thank you: once the payment provider confirms it, the project is READY to run.
        </Alert>
      )}
      {payment === 'cancelled' && (
        <Alert color="yellow" mb="md" title="Payment cancelled">
          Nothing was charged. Accept the quote again when you are ready.
        </Alert>
      )}
      <Tabs
        value={tab}
        onChange={(v) => setParams((prev) => ({ ...Object.fromEntries(prev), tab: v ?? 'connect' }))}
        keepMounted={false}
      >
        <Tabs.List mb="md">
          <Tabs.Tab value="connect">Connect</Tabs.Tab>
          <Tabs.Tab value="scan">Scan report</Tabs.Tab>
          <Tabs.Tab value="mappings">Mappings</Tabs.Tab>
          <Tabs.Tab value="quote">Quote</Tabs.Tab>
          <Tabs.Tab value="delivery">Delivery</Tabs.Tab>
          <Tabs.Tab value="start">Start a run</Tabs.Tab>
          <Tabs.Tab value="runs">Run history</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="connect">
          <ConnectSection project={p} />
        </Tabs.Panel>
        <Tabs.Panel value="scan">
          <ScanSection project={p} />
        </Tabs.Panel>
        <Tabs.Panel value="mappings">
          <MappingsSection project={p} />
        </Tabs.Panel>
        <Tabs.Panel value="quote">
          <QuoteSection project={p} />
        </Tabs.Panel>
        <Tabs.Panel value="delivery">
          <DeliverySection project={p} />
        </Tabs.Panel>
        <Tabs.Panel value="start">
          <StartRunSection project={p} />
        </Tabs.Panel>
        <Tabs.Panel value="runs">
          <RunsSection projectId={p.id} />
        </Tabs.Panel>
      </Tabs>
    </>
  );
}
