/**
 * The mappings editor: each Azure DevOps type, state, field, person and link relation beside its Jira target.
 * Suggestions come from the scan and the Jira project's metadata; each row's picker offers what the connected
 * Jira project has (GET /api/projects/{id}/target-metadata), typing stays free and each problem the API finds on
 * save (`types.Bug: Jira project MIG has no issue type "Defect"`) is shown on its row. Save, then confirm.
 */
import {
  Alert,
  Autocomplete,
  Badge,
  Button,
  Card,
  type ComboboxItem,
  Group,
  type OptionsFilter,
  type RenderAutocompleteOption,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { memo, useCallback, useEffect, useMemo, useState } from 'react';
import { ApiError, api, type Schemas, unwrap } from '../../api/client';
import { allowed } from '../../api/roles';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { projectKeys } from '../projects/api';
import { mappingKeys, mappingsQuery, targetMetadataQuery } from './api';

type Project = Schemas['ProjectDetail'];
type Mappings = Schemas['Mappings'];
const TABLES = [
  ['types', 'Work item types', 'Jira issue type'],
  ['states', 'States', 'Jira status'],
  ['fields', 'Fields', 'Jira field id'],
  ['users', 'People', 'Jira account id'],
  ['linkTypes', 'Link relations', 'Jira link type'],
] as const;
type TableName = (typeof TABLES)[number][0];
type Tables = Pick<Mappings, TableName>;
type TargetMetadata = Schemas['TargetMetadata'];

/** A picker's choices: the values a row may hold, each with what a person reads for it. */
type Choices = { values: string[]; labels: Map<string, string> };

const choices = (entries: [value: string, label: string][]): Choices => ({
  values: [...new Set(entries.map(([v]) => v))],
  labels: new Map(entries),
});

/** What the Jira project offers each table: names for types, statuses and link types, ids for fields and people. */
function choicesOf(meta: TargetMetadata): Record<TableName, Choices> {
  const typesWith = (status: string) =>
    meta.issueTypes.filter((t) => t.statuses.some((s) => s.name === status)).map((t) => t.name);
  return {
    types: choices(meta.issueTypes.map((t) => [t.name, t.subtask ? `${t.name} (sub-task)` : t.name])),
    states: choices(meta.statuses.map((s) => [s.name, `${s.name}: ${typesWith(s.name).join(', ')}`])),
    fields: choices(
      meta.fields.map((f) => [
        f.id,
        `${f.name} (${f.id}${f.type ? `, ${f.items ? `${f.type} of ${f.items}` : f.type}` : ''})`,
      ]),
    ),
    users: choices(
      meta.users.map((u) => [
        u.accountId,
        u.emailAddress ? `${u.displayName} <${u.emailAddress}>` : u.displayName,
      ]),
    ),
    linkTypes: choices(meta.linkTypes.map((l) => [l.name, `${l.name} (${l.outward} / ${l.inward})`])),
  };
}

/** Every choice while the row holds one of them exactly (a picker, not a search); else those matching the text. */
const pickerFilter =
  (labels: Map<string, string>): OptionsFilter =>
  ({ options, search, limit }) => {
    const items = options as ComboboxItem[];
    const q = search.trim().toLowerCase();
    if (!q || items.some((o) => o.value.toLowerCase() === q)) return items.slice(0, limit);
    return items
      .filter((o) => `${o.value} ${labels.get(o.value) ?? ''}`.toLowerCase().includes(q))
      .slice(0, limit);
  };

/** A table's picker settings, made once per change of the choices so that unchanged rows skip their render. */
type Offer = {
  values: string[];
  labels: Map<string, string>;
  filter: OptionsFilter;
  renderOption: RenderAutocompleteOption;
};

const offerOf = (c: Choices): Offer => ({
  ...c,
  filter: pickerFilter(c.labels),
  renderOption: ({ option }) => c.labels.get(option.value) ?? option.value,
});

const offersOf = (all: Record<TableName, Choices>) =>
  Object.fromEntries(TABLES.map(([t]) => [t, offerOf(all[t])])) as Record<TableName, Offer>;

/**
 * One row: its Azure DevOps key and the picker of its Jira target. Memoised: typing in one picker (or a save's
 * pending state) renders that row, not the table's every picker (the page has dozens).
 */
const MappingRow = memo(function MappingRow({
  table,
  rowKey,
  value,
  target,
  offer,
  problems,
  readOnly,
  onEdit,
}: {
  table: TableName;
  rowKey: string;
  value: string | null;
  target: string;
  offer: Offer;
  problems: string | undefined;
  readOnly: boolean;
  onEdit: (table: TableName, key: string, value: string) => void;
}) {
  return (
    <Table.Tr>
      <Table.Td>{rowKey}</Table.Td>
      <Table.Td>
        <Autocomplete
          aria-label={`${target} for ${rowKey}`}
          data={offer.values}
          filter={offer.filter}
          renderOption={offer.renderOption}
          limit={200}
          value={value ?? ''}
          readOnly={readOnly}
          onChange={(v) => onEdit(table, rowKey, v)}
          error={problems}
          // An id means little to a person: say which field or account it is.
          description={table === 'fields' || table === 'users' ? offer.labels.get(value ?? '') : undefined}
        />
      </Table.Td>
    </Table.Tr>
  );
});

/** `types.Bug: ...` -> the problem of row Bug of table types. */
function problemsByRow(error: unknown): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  if (!(error instanceof ApiError) || error.body.code !== 'VALIDATION_FAILED') return rows;
  for (const m of error.messages) {
    const match = /^(types|states|fields|users|linkTypes)\.(.+?): (.*)$/.exec(m);
    if (match)
      rows.set(`${match[1]}.${match[2]}`, [...(rows.get(`${match[1]}.${match[2]}`) ?? []), match[3] ?? '']);
  }
  return rows;
}

export function MappingsSection({ project }: { project: Project }) {
  const { session } = useAuth();
  const client = useQueryClient();
  const mappings = useQuery(mappingsQuery(project.id));
  // What the Jira project offers; without it (Jira unreachable) the pickers offer the suggested targets.
  const metadata = useQuery(targetMetadataQuery(project.id));
  const [draft, setDraft] = useState<Tables | undefined>();
  useEffect(() => {
    const m = mappings.data;
    // Only the tables go back: the record's other fields are the server's.
    if (m)
      setDraft({
        types: m.types,
        states: m.states,
        fields: m.fields,
        users: m.users,
        linkTypes: m.linkTypes,
      });
  }, [mappings.data]);
  const save = useMutation({
    mutationFn: async (tables: Tables) =>
      unwrap(
        await api.PUT('/api/projects/{projectId}/mappings', {
          params: { path: { projectId: project.id } },
          body: tables,
        }),
      ),
    onSuccess: (saved) => client.setQueryData(mappingsQuery(project.id).queryKey, saved),
  });
  const confirm = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST('/api/projects/{projectId}/mappings/confirm', {
          params: { path: { projectId: project.id } },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: mappingKeys.detail(project.id) });
      void client.invalidateQueries({ queryKey: projectKeys.detail(project.id) });
    },
  });
  const canEdit = allowed('PUT /api/projects/{projectId}/mappings', session?.role);
  const edit = useCallback(
    (table: TableName, key: string, value: string) =>
      setDraft((d) =>
        d ? { ...d, [table]: { ...d[table], [key]: table === 'users' && value === '' ? null : value } } : d,
      ),
    [],
  );
  // What each table's pickers offer: what the Jira project has (kept across saves, so the rows skip their render),
  // or (Jira unreachable) the suggested targets.
  const fromJira = useMemo(() => metadata.data && offersOf(choicesOf(metadata.data)), [metadata.data]);
  const fromSuggestions = useMemo(() => {
    const m = mappings.data;
    if (metadata.data || !m) return undefined;
    return offersOf(
      Object.fromEntries(
        TABLES.map(([t]) => [
          t,
          choices(
            Object.values(m[t])
              .filter((v): v is string => Boolean(v))
              .map((v) => [v, v]),
          ),
        ]),
      ) as Record<TableName, Choices>,
    );
  }, [metadata.data, mappings.data]);
  const offers = fromJira ?? fromSuggestions;
  if (mappings.error) return <ErrorNotice error={mappings.error} title="No mappings yet" />;
  if (!draft || !mappings.data || !offers) return <Text>Loading the mappings…</Text>;
  const problems = problemsByRow(save.error);
  return (
    <Stack>
      <Group>
        <Badge variant="light">{mappings.data.source}</Badge>
        {mappings.data.confirmedAt && (
          <Text size="sm">Confirmed {new Date(mappings.data.confirmedAt).toLocaleString()}</Text>
        )}
      </Group>
      {save.error && problems.size > 0 && (
        <Alert color="red" role="alert" title="Some targets do not exist in Jira">
          {problems.size} row(s) need a change: see below.
        </Alert>
      )}
      {save.error && problems.size === 0 && <ErrorNotice error={save.error} title="Could not save" />}
      <ErrorNotice error={confirm.error} title="Could not confirm" />
      {metadata.error && <ErrorNotice error={metadata.error} title="Jira's choices are not available" />}
      {TABLES.map(([table, title, target]) => (
        <Card withBorder key={table} component="section" aria-labelledby={`map-${table}`}>
          <Title order={2} size="h4" id={`map-${table}`} mb="sm">
            {title}
          </Title>
          <Table aria-label={title}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Azure DevOps</Table.Th>
                <Table.Th>{target}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {Object.entries(draft[table]).map(([key, value]) => (
                <MappingRow
                  key={key}
                  table={table}
                  rowKey={key}
                  value={value}
                  target={target}
                  offer={offers[table]}
                  problems={problems.get(`${table}.${key}`)?.join('; ')}
                  readOnly={!canEdit}
                  onEdit={edit}
                />
              ))}
            </Table.Tbody>
          </Table>
        </Card>
      ))}
      {canEdit && (
        <Group>
          <Button onClick={() => save.mutate(draft)} loading={save.isPending}>
            Save mappings
          </Button>
          <Button
            variant="default"
            onClick={() => confirm.mutate()}
            loading={confirm.isPending}
            disabled={mappings.data.source === 'suggested'}
          >
            Confirm mappings
          </Button>
        </Group>
      )}
    </Stack>
  );
}
