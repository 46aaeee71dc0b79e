/**
 * The scan report: totals, work item types (chart), area tree, iteration timeline, custom fields, attachments,
 * comments and the price. A large scan runs in the background: its progress bar polls GET /api/audit/{scanId}.
 */
import { Button, Card, Group, Progress, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { api, type Schemas, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';
import { projectKeys } from '../projects/api';
import { scanKeys, scanQuery } from './api';

type Project = Schemas['ProjectDetail'];
type Report = Schemas['ScanReport'];

function Figure({ label, value }: { label: string; value: string }) {
  return (
    <Card withBorder>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text size="xl" fw={700}>
        {value}
      </Text>
    </Card>
  );
}

export function ScanReportView({ report }: { report: Report }) {
  const types = Object.entries(report.typeCounts)
    .map(([type, count]) => ({ type, count }))
    .sort((a, b) => b.count - a.count);
  return (
    <Stack data-testid="scan-report">
      <SimpleGrid cols={{ base: 2, md: 5 }}>
        <Figure label="Work items" value={String(report.totalWorkItems)} />
        <Figure label="Types" value={String(types.length)} />
        <Figure label="Comments" value={String(report.commentCount)} />
        <Figure label="Attachments" value={`${report.attachmentTotalGb} GB`} />
        <Figure
          label="Price"
          value={`${report.pricing.finalPriceGbp.toFixed(2)} ${report.pricing.currency}`}
        />
      </SimpleGrid>
      <Card withBorder component="section" aria-labelledby="types-title">
        <Title order={2} size="h4" id="types-title" mb="sm">
          Work item types
        </Title>
        <div style={{ width: '100%', height: 260 }}>
          <ResponsiveContainer>
            <BarChart data={types} accessibilityLayer>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="type" />
              <YAxis allowDecimals={false} />
              <Tooltip />
              <Bar dataKey="count" name="Work items" fill="#364fc7" />
            </BarChart>
          </ResponsiveContainer>
        </div>
        <Table aria-label="Work items per type" mt="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Type</Table.Th>
              <Table.Th>Work items</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {types.map((t) => (
              <Table.Tr key={t.type}>
                <Table.Td>{t.type}</Table.Td>
                <Table.Td>{t.count}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="areas-title">
          <Title order={2} size="h4" id="areas-title" mb="sm">
            Area tree
          </Title>
          <Table aria-label="Areas">
            <Table.Tbody>
              {report.areaPaths.map((a) => (
                <Table.Tr key={a.path}>
                  <Table.Td style={{ paddingLeft: 8 + a.depth * 16 }}>{a.path.split('\\').pop()}</Table.Td>
                  <Table.Td>{a.itemCount} items</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Card>
        <Card withBorder component="section" aria-labelledby="iterations-title">
          <Title order={2} size="h4" id="iterations-title" mb="sm">
            Iteration timeline
          </Title>
          <Table aria-label="Iterations">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Iteration</Table.Th>
                <Table.Th>Dates</Table.Th>
                <Table.Th>Items</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {[...report.iterationPaths]
                .sort((a, b) => a.startDate.localeCompare(b.startDate))
                .map((i) => (
                  <Table.Tr key={i.path}>
                    <Table.Td>{i.path.split('\\').pop()}</Table.Td>
                    <Table.Td>
                      {i.startDate || '?'} to {i.endDate || '?'}
                    </Table.Td>
                    <Table.Td>{i.itemCount}</Table.Td>
                  </Table.Tr>
                ))}
            </Table.Tbody>
          </Table>
        </Card>
      </SimpleGrid>
      <Card withBorder component="section" aria-labelledby="fields-title">
        <Title order={2} size="h4" id="fields-title" mb="sm">
          Custom fields
        </Title>
        <Table aria-label="Custom fields">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Field</Table.Th>
              <Table.Th>Reference name</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Items with a value</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {report.customFields.map((f) => (
              <Table.Tr key={f.referenceName}>
                <Table.Td>{f.name}</Table.Td>
                <Table.Td>{f.referenceName}</Table.Td>
                <Table.Td>{f.type}</Table.Td>
                <Table.Td>{f.itemCount}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Card>
    </Stack>
  );
}

export function ScanSection({ project }: { project: Project }) {
  const client = useQueryClient();
  const stored = project.scanSummary?.scanId;
  const [scanId, setScanId] = useState<string | undefined>(typeof stored === 'string' ? stored : undefined);
  const [running, setRunning] = useState(false);
  const audit = useQuery(scanQuery(scanId, running));
  if (running && audit.data && audit.data.status !== 'RUNNING') {
    setRunning(false);
    void client.invalidateQueries({ queryKey: projectKeys.detail(project.id) });
  }
  const scan = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/connectors/scan', { body: { type: 'azure_devops', projectId: project.id } }),
      ),
    onSuccess: (answer) => {
      setScanId(answer.scanId);
      setRunning(answer.status === 'RUNNING');
      void client.invalidateQueries({ queryKey: scanKeys.detail(answer.scanId) });
      void client.invalidateQueries({ queryKey: projectKeys.detail(project.id) });
    },
  });
  const report = audit.data?.report ?? null;
  const progress = audit.data?.progress;
  return (
    <Stack>
      <Group>
        {/* One scan at a time: a second one started meanwhile would race the first to the project's report. */}
        <Button onClick={() => scan.mutate()} loading={scan.isPending} disabled={running}>
          {running ? 'Scanning in the background' : scanId ? 'Scan again' : 'Scan the source'}
        </Button>
        <Text size="sm">
          Reads every work item of the source project (nothing is written) and prices the migration.
        </Text>
      </Group>
      <ErrorNotice error={scan.error ?? audit.error} title="The scan failed" />
      {running && progress && (
        <Progress.Root size="xl">
          {/* The name goes on the section: it is the element with role="progressbar" (the root has none). */}
          <Progress.Section value={progress.percent} aria-label="Scan progress">
            <Progress.Label>
              {progress.processed} / {progress.total}
            </Progress.Label>
          </Progress.Section>
        </Progress.Root>
      )}
      {audit.data?.status === 'FAILED' && (
        <ErrorNotice error={new Error(audit.data.error ?? 'scan failed')} />
      )}
      {report && <ScanReportView report={report} />}
    </Stack>
  );
}
