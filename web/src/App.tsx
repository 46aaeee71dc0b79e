/** Routes: sign-in for a visitor, the console's pages for a signed-in user. */
import { Center, Loader } from '@mantine/core';
import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch, useRoute } from 'wouter';
import { useAuth } from './auth';
import { Layout } from './components/Layout';
import { AcceptInvitationPage } from './features/auth/AcceptInvitationPage';
import { SignInPage } from './features/auth/SignInPage';
import { ProjectsPage } from './features/projects/ProjectsPage';

// The first pages a person sees load with the app; the rest (charts, the API reference) when first opened.
const ProjectPage = lazy(() =>
  import('./features/projects/ProjectPage').then((m) => ({ default: m.ProjectPage })),
);
const DashboardPage = lazy(() =>
  import('./features/dashboard/DashboardPage').then((m) => ({ default: m.DashboardPage })),
);
const RunPage = lazy(() => import('./features/runs/RunPage').then((m) => ({ default: m.RunPage })));
const TeamPage = lazy(() => import('./features/team/TeamPage').then((m) => ({ default: m.TeamPage })));
const BillingPage = lazy(() =>
  import('./features/billing/BillingPage').then((m) => ({ default: m.BillingPage })),
);
const PluginsPage = lazy(() =>
  import('./features/plugins/PluginsPage').then((m) => ({ default: m.PluginsPage })),
);
const SsoPage = lazy(() => import('./features/sso/SsoPage').then((m) => ({ default: m.SsoPage })));
const ApiReferencePage = lazy(() =>
  import('./features/api-reference/ApiReferencePage').then((m) => ({ default: m.ApiReferencePage })),
);

export function App() {
  const { session, loading } = useAuth();
  // The invitation link's page stands alone, signed in or not: accepting signs its new member in.
  const [accepting] = useRoute('/invitations/accept');
  if (accepting && !loading) return <AcceptInvitationPage />;
  if (loading)
    return (
      <Center h="100vh" component="main">
        <Loader aria-label="Loading" />
      </Center>
    );
  if (!session)
    return (
      <Switch>
        <Route path="/signin" component={SignInPage} />
        <Route>
          <Redirect to={`/signin?next=${encodeURIComponent(location.pathname + location.search)}`} />
        </Route>
      </Switch>
    );
  return (
    <Layout>
      <Suspense fallback={<Loader aria-label="Loading the page" />}>
        <Switch>
          <Route path="/" component={ProjectsPage} />
          <Route path="/signin">
            <Redirect to="/" />
          </Route>
          <Route path="/projects/:projectId" component={ProjectPage} />
          <Route path="/dashboard" component={DashboardPage} />
          <Route path="/runs/:runId" component={RunPage} />
          <Route path="/team" component={TeamPage} />
          <Route path="/billing" component={BillingPage} />
          <Route path="/plugins" component={PluginsPage} />
          <Route path="/sso" component={SsoPage} />
          <Route path="/api-reference" component={ApiReferencePage} />
          <Route>
            <Redirect to="/" />
          </Route>
        </Switch>
      </Suspense>
    </Layout>
  );
}
