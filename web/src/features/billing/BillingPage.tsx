/** Billing (owner): what was spent per project, every quote and payment. */
import { Card, SimpleGrid, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { billingQuery } from './api';

export function BillingPage() {
  const billing = useQuery(billingQuery());
  const b = billing.data;
  return (
    <>
      <PageTitle>Billing</PageTitle>
      <ErrorNotice error={billing.error} />
      {b && (
        <>
          <SimpleGrid cols={{ base: 1, md: 3 }} mb="lg">
            <Card withBorder>
              <Text size="sm">Total spent</Text>
              <Text fw={700} size="xl">
                {b.totalSpentGbp.toFixed(2)} {b.currency}
              </Text>
            </Card>
          </SimpleGrid>
          <Title order={2} size="h4" mb="xs">
            Spend per project
          </Title>
          <Table aria-label="Spend per project" mb="lg">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Project</Table.Th>
                <Table.Th>Payments</Table.Th>
                <Table.Th>Total</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {b.spendByProject.map((s) => (
                <Table.Tr key={s.projectId}>
                  <Table.Td>{s.projectName ?? `${s.projectId} (deleted)`}</Table.Td>
                  <Table.Td>{s.payments}</Table.Td>
                  <Table.Td>{s.totalGbp.toFixed(2)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Title order={2} size="h4" mb="xs">
            Payments
          </Title>
          <Table aria-label="Payments">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Date</Table.Th>
                <Table.Th>Provider</Table.Th>
                <Table.Th>Amount</Table.Th>
                <Table.Th>Status</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {b.payments.map((p) => (
                <Table.Tr key={p.id}>
                  <Table.Td>{new Date(p.createdAt).toLocaleString()}</Table.Td>
                  <Table.Td>{p.provider}</Table.Td>
                  <Table.Td>
                    {p.amountGbp.toFixed(2)} {p.currency}
                  </Table.Td>
                  <Table.Td>{p.status}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </>
      )}
    </>
  );
}
