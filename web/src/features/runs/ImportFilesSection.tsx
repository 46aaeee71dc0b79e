/**
 * A run delivered by Jira's JSON importer: its files, each to download, the direct link to the site's import page,
 * and the steps a Jira administrator takes for each batch before resuming the run (docs/jira-import.md).
 */
import { Anchor, Button, Card, List, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { importFilesQuery } from './api';

interface Props {
  runId: string;
  /** The Jira site the run writes into (the project's target connection). */
  siteUrl: string | undefined;
  /** Read again while the run is worked on: the files are written by its first phases. */
  working: boolean;
  save: (path: string, filename: string) => void;
}

/**
 * Jira Cloud's External System Import page (Jira settings > System > External System Import), where JSON is one
 * of the importers; the path the Jira Importers plugin serves it under.
 */
export const importPageOf = (siteUrl: string) =>
  `${siteUrl.replace(/\/+$/, '')}/secure/admin/ExternalImport1.jspa`;

export function ImportFilesSection({ runId, siteUrl, working, save }: Props) {
  const files = useQuery(importFilesQuery(runId, working));
  const index = files.data;

  return (
    <Card withBorder component="section" aria-labelledby="import-files-title" data-testid="import-files">
      <Stack gap="xs">
        <Title order={2} size="h4" id="import-files-title">
          Jira import files
        </Title>
        <Text size="sm">For each batch, in order, a Jira administrator:</Text>
        <List type="ordered" size="sm">
          <List.Item>downloads the batch's file below;</List.Item>
          <List.Item>
            opens{' '}
            {siteUrl ? (
              <Anchor href={importPageOf(siteUrl)} target="_blank" rel="noreferrer">
                the site's import page
              </Anchor>
            ) : (
              "the site's import page"
            )}{' '}
            (Jira settings &gt; System &gt; External System Import), chooses JSON and uploads the file, about
            an hour for 1,500 issues;
          </List.Item>
          <List.Item>
            resumes the run here once Jira has imported it: the service checks the batch in Jira by its label,
            then pauses for the next one.
          </List.Item>
        </List>
        {!index && <Text size="sm">The files are being built from Azure DevOps.</Text>}
        {index && (
          <Table aria-label="Import files">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Batch</Table.Th>
                <Table.Th>Issues</Table.Th>
                <Table.Th>Label in Jira</Table.Th>
                <Table.Th>File</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {index.files.map((f) => (
                <Table.Tr key={f.number}>
                  <Table.Td>{f.number}</Table.Td>
                  <Table.Td>{f.issues}</Table.Td>
                  <Table.Td>
                    <code>{f.label}</code>
                  </Table.Td>
                  <Table.Td>
                    {f.written ? (
                      <Button
                        variant="default"
                        size="xs"
                        onClick={() =>
                          save(
                            `/api/migrations/${runId}/import-files/${f.number}`,
                            `jira-import-${runId}-${f.number}.json`,
                          )
                        }
                      >
                        Download batch {f.number}
                      </Button>
                    ) : (
                      <Text size="sm" c="dimmed">
                        Not written yet: the run writes it when it reaches this batch
                      </Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
        {index && index.unmappedPeople.length > 0 && (
          <Text size="sm">
            {index.unmappedPeople.length} people have no Jira account: their comments and changes keep a
            written attribution.
          </Text>
        )}
      </Stack>
    </Card>
  );
}
