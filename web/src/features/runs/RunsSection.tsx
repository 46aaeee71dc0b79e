/** A project's run history, most recent first. */
import { Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'wouter';
import { ErrorNotice } from '../../components/ErrorNotice';
import { StatusBadge } from '../../components/StatusBadge';
import { projectRunsQuery } from './api';

export function RunsSection({ projectId }: { projectId: string }) {
  const runs = useQuery(projectRunsQuery(projectId));
  if (runs.error) return <ErrorNotice error={runs.error} />;
  if (runs.data?.length === 0) return <Text>No runs yet.</Text>;
  return (
    <Table aria-label="Runs" striped>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Run</Table.Th>
          <Table.Th>Type</Table.Th>
          <Table.Th>Status</Table.Th>
          <Table.Th>Progress</Table.Th>
          <Table.Th>Created / skipped / failed</Table.Th>
          <Table.Th>Started</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {(runs.data ?? []).map((r) => (
          <Table.Tr key={r.id}>
            <Table.Td>
              <Link href={`/runs/${r.id}`}>{r.id.slice(0, 8)}</Link>
            </Table.Td>
            <Table.Td>
              {r.type}
              {r.dryRun ? ' (dry run)' : ''}
            </Table.Td>
            <Table.Td>
              <StatusBadge status={r.status} />
            </Table.Td>
            <Table.Td>{r.progressPercent}%</Table.Td>
            <Table.Td>
              {r.successCount} / {r.skippedCount} / {r.failureCount}
            </Table.Td>
            <Table.Td>{r.startedAt ? new Date(r.startedAt).toLocaleString() : 'not yet'}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
