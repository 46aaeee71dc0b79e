/** An API error as the API said it: every sentence of its message (a 400 lists each problem), and its code. */
import { Alert, List } from '@mantine/core';
import { ApiError } from '../api/client';

export function ErrorNotice({ error, title = 'The request failed' }: { error: unknown; title?: string }) {
  if (!error) return null;
  const messages = error instanceof ApiError ? error.messages : [String((error as Error).message ?? error)];
  const code = error instanceof ApiError ? error.body.code : undefined;
  return (
    <Alert color="red" title={code ? `${title} (${code})` : title} role="alert" mb="md">
      {messages.length === 1 ? (
        messages[0]
      ) : (
        <List size="sm">
          {messages.map((m) => (
            <List.Item key={m}>{m}</List.Item>
          ))}
        </List>
      )}
    </Alert>
  );
}
