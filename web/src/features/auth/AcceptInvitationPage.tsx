/**
 * The invitation mail's link (`/invitations/accept#token=…`): the new member chooses a password and is signed
 * in. The token sits in the fragment so that no server log or Referer ever sees it; this page reads it there and
 * sends it nowhere but `POST /api/invitations/accept`.
 */
import { Anchor, Button, Card, Center, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { ApiError, api, setAccessToken, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';

/** The API's rule for a password (AcceptInvitationSchema). */
const MIN_PASSWORD = 8;

/** The token of the link's fragment (`#token=…`), read once when the page opens. */
function tokenOfFragment(): string | undefined {
  const token = new URLSearchParams(location.hash.replace(/^#/, '')).get('token');
  return token ? token : undefined;
}

export function AcceptInvitationPage() {
  const [token] = useState(tokenOfFragment);
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const mismatch = repeat.length > 0 && repeat !== password;

  async function accept(e: FormEvent) {
    e.preventDefault();
    if (!token || mismatch) return;
    setBusy(true);
    setError(undefined);
    try {
      const answer = unwrap(await api.POST('/api/invitations/accept', { body: { token, password } }));
      // The link works once: it leaves the address bar and the history, and the new member is signed in.
      history.replaceState(null, '', '/');
      setAccessToken(answer.accessToken);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const spent = error instanceof ApiError && error.body.code === 'INVITATION_INVALID';
  const taken = error instanceof ApiError && error.body.code === 'EMAIL_TAKEN';
  return (
    <Center mih="100vh" component="main">
      <Card withBorder shadow="sm" p="xl" w={420}>
        <Title order={1} size="h2" mb="md">
          Accept your invitation
        </Title>
        {!token ? (
          <Text role="alert">
            This link carries no invitation token. Open the link of your invitation e-mail exactly as it is,
            or ask your administrator for a new invitation.
          </Text>
        ) : (
          <>
            <ErrorNotice
              error={error}
              title={spent ? 'This invitation cannot be used' : 'Could not accept the invitation'}
            />
            {(spent || taken) && (
              <Text size="sm" mb="md">
                {spent
                  ? 'Ask the person who invited you to send a new invitation. '
                  : 'You already have an account: '}
                <Anchor href="/signin">Sign in</Anchor>
              </Text>
            )}
            {!spent && !taken && (
              <form onSubmit={accept}>
                <Stack>
                  <Text size="sm">Choose the password you will sign in with.</Text>
                  <PasswordInput
                    label="New password"
                    description={`At least ${MIN_PASSWORD} characters`}
                    autoComplete="new-password"
                    required
                    minLength={MIN_PASSWORD}
                    value={password}
                    onChange={(e) => setPassword(e.currentTarget.value)}
                  />
                  <PasswordInput
                    label="Repeat the password"
                    autoComplete="new-password"
                    required
                    value={repeat}
                    error={mismatch ? 'The two passwords differ' : undefined}
                    onChange={(e) => setRepeat(e.currentTarget.value)}
                  />
                  <Button type="submit" loading={busy} disabled={mismatch}>
                    Accept and sign in
                  </Button>
                </Stack>
              </form>
            )}
          </>
        )}
      </Card>
    </Center>
  );
}
