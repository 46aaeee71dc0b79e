/**
 * A finished run's verification: the latest summary (items checked, fully faithful, differences by field), the
 * audit to download as CSV or JSON, and the button that reads every migrated issue back from Jira again.
 */
import { Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { allowed } from '../../api/roles';
import type { components } from '../../api/schema';
import type { Role } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { runKeys, startVerification } from './api';

type Summary = components['schemas']['VerificationSummary'];

interface Props {
  runId: string;
  /** The run's status now (VERIFYING while a verification works). */
  status: string;
  summary: Summary | null | undefined;
  role: Role | undefined;
  save: (path: string, filename: string) => void;
}

/** Only a run that wrote to Jira and finished can be verified (docs/api.md, "Verification of a run"). */
export const verifiable = (status: string, dryRun: boolean) =>
  !dryRun && (status === 'COMPLETED' || status === 'PARTIAL' || status === 'VERIFYING');

export function VerificationSection({ runId, status, summary, role, save }: Props) {
  const client = useQueryClient();
  const verify = useMutation({
    mutationFn: () => startVerification(runId),
    onSuccess: () => void client.invalidateQueries({ queryKey: runKeys.detail(runId) }),
  });
  const verifying = status === 'VERIFYING';
  const differences = Object.entries(summary?.differencesByField ?? {}).sort((a, b) => b[1] - a[1]);

  return (
    <Card withBorder component="section" aria-labelledby="verification-title" data-testid="verification">
      <Stack gap="xs">
        <Group justify="space-between">
          <Title order={2} size="h4" id="verification-title">
            Verification
          </Title>
          {allowed('POST /api/migrations/{runId}/verification', role) && (
            <Button
              variant="light"
              onClick={() => verify.mutate()}
              loading={verify.isPending}
              disabled={verifying}
            >
              {summary ? 'Verify again' : 'Verify every item'}
            </Button>
          )}
        </Group>
        {verifying && (
          <Text size="sm">Reading every migrated issue back from Jira and comparing it with its source…</Text>
        )}
        {!summary && !verifying && (
          <Text size="sm">
            Not verified yet. A verification reads each issue back from Jira and compares it, field by field,
            with its Azure DevOps item.
          </Text>
        )}
        {summary && (
          <>
            <Text data-testid="verification-summary">
              {summary.fullyFaithful} of {summary.itemsChecked} items fully faithful
              {summary.unverified > 0 ? `, ${summary.unverified} could not be compared` : ''}
              {summary.itemsWithNotes > 0 ? `, ${summary.itemsWithNotes} with notes` : ''}
            </Text>
            {differences.length > 0 && (
              <Table aria-label="Differences by field" data-testid="verification-differences">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Field</Table.Th>
                    <Table.Th>Items with a difference</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {differences.map(([field, count]) => (
                    <Table.Tr key={field}>
                      <Table.Td>{field}</Table.Td>
                      <Table.Td>{count}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            )}
            <Group>
              <Button
                variant="default"
                onClick={() =>
                  save(`/api/migrations/${runId}/verification/audit?format=csv`, `verification-${runId}.csv`)
                }
              >
                Download audit (CSV)
              </Button>
              <Button
                variant="default"
                onClick={() =>
                  save(`/api/migrations/${runId}/verification/audit`, `verification-${runId}.json`)
                }
              >
                Download audit (JSON)
              </Button>
            </Group>
          </>
        )}
        <ErrorNotice error={verify.error} title="Verification not started" />
      </Stack>
    </Card>
  );
}
