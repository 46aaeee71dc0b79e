/** A project's or a run's status as a badge: ended well, ended badly, or under way. */
import { Badge } from '@mantine/core';

export function StatusBadge({ status }: { status: string }) {
  const color =
    status === 'COMPLETED' ? 'teal' : status === 'FAILED' || status === 'CANCELLED' ? 'red' : 'indigo';
  return (
    <Badge color={color} variant="outline">
      {status}
    </Badge>
  );
}
