/** Sign in with e-mail and password, or with the tenant's single sign-on (the API's browser leg). */
import { Button, Card, Center, Divider, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'wouter';
import { useAuth } from '../../auth';
import { ErrorNotice } from '../../components/ErrorNotice';

export function SignInPage() {
  const { signIn } = useAuth();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [slug, setSlug] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const next = params.get('next') ?? '/';

  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(email, password);
      history.replaceState(null, '', next.startsWith('/') && !next.startsWith('//') ? next : '/');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  function sso(e: FormEvent) {
    e.preventDefault();
    location.assign(
      `/api/auth/sso/${encodeURIComponent(slug.trim())}/start?returnTo=${encodeURIComponent('/')}`,
    );
  }

  return (
    <Center mih="100vh" component="main">
      <Card withBorder shadow="sm" p="xl" w={380}>
        <Title order={1} size="h2" mb="md">
          Sign in
        </Title>
        <ErrorNotice error={error} title="Sign-in failed" />
        <form onSubmit={submit}>
          <Stack>
            <TextInput
              label="E-mail"
              type="email"
              autoComplete="username"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
            />
            <PasswordInput
              label="Password"
              autoComplete="current-password"
              required
              value={password}
              onChange={(e) => setPassword(e.currentTarget.value)}
            />
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </form>
        <Divider my="lg" label="or" labelPosition="center" />
        <form onSubmit={sso}>
          <Stack>
            <TextInput
              label="Company sign-in name"
              description="Your administrator gives you this name"
              required
              value={slug}
              onChange={(e) => setSlug(e.currentTarget.value)}
            />
            <Button type="submit" variant="default">
              Sign in with single sign-on
            </Button>
          </Stack>
        </form>
        <Text size="xs" mt="md" c="dimmed">
          Your session is kept by a secure cookie; the access token never leaves this page's memory.
        </Text>
      </Card>
    </Center>
  );
}
