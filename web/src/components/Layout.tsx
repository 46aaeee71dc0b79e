/** The frame of every signed-in page: header with the user and sign-out, navigation, main content. */
import { AppShell, Button, Group, NavLink, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { allowed } from '../api/roles';
import { useAuth } from '../auth';

export function Layout({ children }: { children: ReactNode }) {
  const { session, signOut } = useAuth();
  const [location] = useLocation();
  const role = session?.role;
  const links = [
    { href: '/', label: 'Projects', show: true },
    { href: '/dashboard', label: 'Dashboard', show: true },
    { href: '/team', label: 'Team', show: allowed('GET /api/team/members', role) },
    { href: '/billing', label: 'Billing', show: allowed('GET /api/billing', role) },
    { href: '/plugins', label: 'Plugins', show: true },
    { href: '/sso', label: 'Single sign-on', show: allowed('GET /api/sso', role) },
    { href: '/api-reference', label: 'API reference', show: true },
  ];
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 200, breakpoint: 'sm' }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Text fw={700} size="lg" component="span">
            Tracker Migration
          </Text>
          <Group gap="sm">
            <Text size="sm" component="span">
              {session?.email} ({role})
            </Text>
            <Button variant="default" size="xs" onClick={() => void signOut()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        {links
          .filter((l) => l.show)
          .map((l) => (
            <NavLink
              key={l.href}
              component={Link}
              href={l.href}
              label={l.label}
              variant="filled"
              active={
                l.href === '/' ? location === '/' || location.startsWith('/projects') : location === l.href
              }
              aria-current={location === l.href ? 'page' : undefined}
            />
          ))}
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}

export function PageTitle({ children }: { children: ReactNode }) {
  return (
    <Title order={1} size="h2" mb="md">
      {children}
    </Title>
  );
}
