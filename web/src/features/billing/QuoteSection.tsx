/**
 * The quote and its payment: the price the scan set; the owner accepts it. Offline the instant provider pays
 * at once; with Stripe the browser goes to Checkout and comes back to this project (`?payment=success`).
 */
import { Button, Card, SimpleGrid, Stack, Text } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type Schemas, unwrap } from '../../api/client';
import { allowed } from '../../api/roles';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';
import { projectKeys } from '../projects/api';
import { quoteQuery } from './api';

type Project = Schemas['ProjectDetail'];

export function QuoteSection({ project }: { project: Project }) {
  const { session } = useAuth();
  const client = useQueryClient();
  const quote = useQuery(quoteQuery(project.id));
  const accept = useMutation({
    mutationFn: async (quoteId: string) =>
      unwrap(
        await api.POST('/api/projects/{projectId}/quote/accept', {
          params: { path: { projectId: project.id } },
          body: { quoteId },
        }),
      ),
    onSuccess: (answer) => {
      if (answer.quote.checkoutUrl) location.assign(answer.quote.checkoutUrl);
      client.setQueryData(quoteQuery(project.id).queryKey, answer.quote);
      void client.invalidateQueries({ queryKey: projectKeys.detail(project.id) });
    },
  });
  if (quote.error) return <ErrorNotice error={quote.error} title="No quote yet" />;
  const q = quote.data;
  if (!q) return <Text>Loading the quote…</Text>;
  return (
    <Stack data-testid="quote">
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        <Card withBorder>
          <Text size="sm">Work items</Text>
          <Text fw={700}>{q.totalItems}</Text>
        </Card>
        <Card withBorder>
          <Text size="sm">Attachments</Text>
          <Text fw={700}>{q.attachmentGb} GB</Text>
        </Card>
        <Card withBorder>
          <Text size="sm">Discount</Text>
          <Text fw={700}>{q.discountPercent}%</Text>
        </Card>
        <Card withBorder>
          <Text size="sm">Price</Text>
          <Text fw={700} size="xl">
            {q.finalPriceGbp.toFixed(2)} {q.currency}
          </Text>
        </Card>
      </SimpleGrid>
      <Text>
        Status: <strong>{q.status}</strong>
        {q.paidAt ? `, paid ${new Date(q.paidAt).toLocaleString()}` : ''}
      </Text>
      <ErrorNotice error={accept.error} title="Could not accept the quote" />
      {allowed('POST /api/projects/{projectId}/quote/accept', session?.role) && q.status === 'OPEN' && (
        <Button onClick={() => accept.mutate(q.id)} loading={accept.isPending} w="fit-content">
          Accept and pay {q.finalPriceGbp.toFixed(2)} {q.currency}
        </Button>
      )}
      {q.status === 'PENDING_PAYMENT' && q.checkoutUrl && (
        <Button component="a" href={q.checkoutUrl} w="fit-content">
          Continue to payment
        </Button>
      )}
      {!allowed('POST /api/projects/{projectId}/quote/accept', session?.role) && (
        <Text size="sm">Only the account owner can accept the quote.</Text>
      )}
    </Stack>
  );
}
