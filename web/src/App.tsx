/** Routes: sign-in for a visitor, the console's pages for a signed-in user. */
import { Center, Loader } from '@mantine/core';
import { Redirect, Route, Switch } from 'wouter';
import { useAuth } from './auth';
import { Layout } from './components/Layout';
import { ApiReferencePage } from './pages/ApiReferencePage';
import { BillingPage } from './pages/BillingPage';
import { PluginsPage } from './pages/PluginsPage';
import { ProjectPage } from './pages/ProjectPage';
import { ProjectsPage } from './pages/ProjectsPage';
import { RunPage } from './pages/RunPage';
import { SignInPage } from './pages/SignInPage';
import { SsoPage } from './pages/SsoPage';
import { TeamPage } from './pages/TeamPage';

export function App() {
  const { session, loading } = useAuth();
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
      <Switch>
        <Route path="/" component={ProjectsPage} />
        <Route path="/signin">
          <Redirect to="/" />
        </Route>
        <Route path="/projects/:projectId" component={ProjectPage} />
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
    </Layout>
  );
}
