/** CDK context shared by the stack tests. */

/** Skips asset bundling: the template is the same, only the asset contents are left out. */
export const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] as string[] };

/** The settings a prod deployment passes as context (`-c key=value`, hence strings): every feature on. */
export const PROD_CONTEXT = {
  stage: 'prod',
  allowedOrigins: 'https://app.example.com, https://admin.example.com',
  throttleRateLimit: '321',
  domainName: 'api.example.com',
  certificateArn: 'arn:aws:acm:eu-west-2:123456789012:certificate/11111111-2222-3333-4444-555555555555',
  alarmEmail: 'ops@example.com',
  stripeSecretArn: 'arn:aws:secretsmanager:eu-west-2:123456789012:secret:tms/stripe-AbCdEf',
  appUrl: 'https://app.example.com',
  outboundAllowedHosts: 'jira.example.com,*.tfs.example.org',
  outboundAllowedPorts: '8443',
  mailFrom: 'invitations@mail.example.com',
  trackerOAuthSecretArn: 'arn:aws:secretsmanager:eu-west-2:123456789012:secret:tms/tracker-oauth-GhIjKl',
  atlassianClientId: 'atlassian-client-id',
  entraClientId: '00000000-1111-2222-3333-444444444444',
  entraTenant: 'contoso.onmicrosoft.com',
  engineConcurrency: '80',
  scanWorkerConcurrency: '15',
};
