/** Single sign-on (owner): the tenant's OpenID Connect provider, its redirect URI and its users' start URL. */
import { Button, Card, Checkbox, Code, Group, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { ApiError, api, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';
import { PageTitle } from '../../components/Layout';
import { ssoConfigQuery } from './api';

export function SsoPage() {
  const client = useQueryClient();
  const config = useQuery(ssoConfigQuery());
  const [slug, setSlug] = useState('');
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [domains, setDomains] = useState('');
  const [enabled, setEnabled] = useState(true);
  useEffect(() => {
    const c = config.data;
    if (!c) return;
    setSlug(c.slug);
    setIssuer(c.issuer);
    setClientId(c.clientId);
    setDomains(c.allowedDomains.join(', '));
    setEnabled(c.enabled);
  }, [config.data]);
  const save = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.PUT('/api/sso', {
          body: {
            slug,
            issuer,
            clientId,
            ...(clientSecret ? { clientSecret } : {}),
            allowedDomains: domains
              .split(',')
              .map((d) => d.trim())
              .filter(Boolean),
            // Single sign-on makes members only; other roles come from an invitation or the team page.
            defaultRole: 'member',
            enabled,
          },
        }),
      ),
    onSuccess: (saved) => {
      setClientSecret('');
      client.setQueryData(ssoConfigQuery().queryKey, saved);
    },
  });
  const notConfigured = config.error instanceof ApiError && config.error.body.code === 'SSO_NOT_CONFIGURED';
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <>
      <PageTitle>Single sign-on</PageTitle>
      {!notConfigured && <ErrorNotice error={config.error} />}
      {notConfigured && <Text mb="md">Single sign-on is not configured yet.</Text>}
      {config.data && (
        <Card withBorder mb="md">
          <Text size="sm">Register this redirect URI at your identity provider:</Text>
          <Code block>{config.data.redirectUri}</Code>
          <Text size="sm" mt="xs">
            Your users sign in at:
          </Text>
          <Code block>{config.data.startUrl}</Code>
        </Card>
      )}
      <form onSubmit={submit}>
        <Stack maw={560}>
          <ErrorNotice error={save.error} title="Could not save" />
          <TextInput
            label="Sign-in name (slug)"
            required
            value={slug}
            onChange={(e) => setSlug(e.currentTarget.value)}
          />
          <TextInput
            label="Issuer URL"
            required
            value={issuer}
            onChange={(e) => setIssuer(e.currentTarget.value)}
          />
          <TextInput
            label="Client id"
            required
            value={clientId}
            onChange={(e) => setClientId(e.currentTarget.value)}
          />
          <PasswordInput
            label={config.data?.clientSecretSet ? 'Client secret (kept when left empty)' : 'Client secret'}
            required={!config.data?.clientSecretSet}
            value={clientSecret}
            onChange={(e) => setClientSecret(e.currentTarget.value)}
          />
          <TextInput
            label="Allowed e-mail domains (comma separated)"
            value={domains}
            onChange={(e) => setDomains(e.currentTarget.value)}
          />
          <Text size="sm" c="dimmed">
            People who sign in for the first time become members (invited people get the invited role). A
            member you remove comes back only when you invite them again.
          </Text>
          <Checkbox label="Enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
          <Group>
            <Button type="submit" loading={save.isPending}>
              Save single sign-on
            </Button>
          </Group>
        </Stack>
      </form>
    </>
  );
}
