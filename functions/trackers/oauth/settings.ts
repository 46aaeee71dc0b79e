/**
 * Which OAuth providers this deployment has, from the environment: the endpoints (real hosts by default; the
 * sandbox trackers offline) and each app registration's client id and secret. In AWS the two secrets live in
 * one Secrets Manager secret named by `TRACKER_OAUTH_SECRET_ARN` (`{"atlassianClientSecret",
 * "entraClientSecret"}`), read once per cold start. A provider without a client id and secret is simply not
 * offered: connecting by OAuth then answers OAUTH_NOT_CONFIGURED and pasted tokens still work.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { OAuthProvider } from '#domain/tracker-oauth.ts';
import { ConfigError, type EnvInput, readEnv } from '#platform/env.ts';
import { AtlassianOAuth, EntraOAuth, type OAuthEndpoints, type OAuthProviderClient } from './providers.ts';

export interface OAuthProviders {
  atlassian?: AtlassianOAuth;
  entra?: EntraOAuth;
}

export function endpointsFromEnv(source?: EnvInput): OAuthEndpoints {
  const env = readEnv(
    ['ATLASSIAN_AUTH_URL', 'ATLASSIAN_API_URL', 'ENTRA_AUTHORITY_URL', 'ENTRA_TENANT'],
    source,
  );
  return {
    atlassianAuthUrl: env.ATLASSIAN_AUTH_URL,
    atlassianApiUrl: env.ATLASSIAN_API_URL,
    entraAuthorityUrl: env.ENTRA_AUTHORITY_URL,
    entraTenant: env.ENTRA_TENANT,
  };
}

let secretRead: Promise<{ atlassianClientSecret?: string; entraClientSecret?: string }> | undefined;

async function readSecret(arn: string, client: SecretsManagerClient) {
  let text: string | undefined;
  try {
    text = (await client.send(new GetSecretValueCommand({ SecretId: arn }))).SecretString;
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration: could not read TRACKER_OAUTH_SECRET_ARN (${err instanceof Error ? err.name : 'error'})`,
    );
  }
  try {
    const parsed = JSON.parse(text ?? '') as Record<string, unknown>;
    const pick = (k: string) => (typeof parsed[k] === 'string' ? (parsed[k] as string) : undefined);
    return {
      atlassianClientSecret: pick('atlassianClientSecret'),
      entraClientSecret: pick('entraClientSecret'),
    };
  } catch {
    throw new ConfigError('Invalid configuration: TRACKER_OAUTH_SECRET_ARN does not hold a JSON object');
  }
}

/** The configured providers (the environment read each call: cheap, and tests change it between apps). */
export async function oauthProviders(
  source?: EnvInput,
  secrets: () => SecretsManagerClient = () => new SecretsManagerClient({}),
): Promise<OAuthProviders> {
  const endpoints = endpointsFromEnv(source);
  const env = readEnv(
    [
      'ATLASSIAN_CLIENT_ID',
      'ATLASSIAN_CLIENT_SECRET',
      'ENTRA_CLIENT_ID',
      'ENTRA_CLIENT_SECRET',
      'TRACKER_OAUTH_SECRET_ARN',
    ],
    source,
  );
  let atlassianSecret = env.ATLASSIAN_CLIENT_SECRET;
  let entraSecret = env.ENTRA_CLIENT_SECRET;
  const arn = env.TRACKER_OAUTH_SECRET_ARN;
  if (arn && (!atlassianSecret || !entraSecret)) {
    secretRead ??= readSecret(arn, secrets()).catch((err) => {
      secretRead = undefined; // a later call may try again
      throw err;
    });
    const s = await secretRead;
    atlassianSecret ??= s.atlassianClientSecret;
    entraSecret ??= s.entraClientSecret;
  }
  const atlassianId = env.ATLASSIAN_CLIENT_ID;
  const entraId = env.ENTRA_CLIENT_ID;
  return {
    ...(atlassianId && atlassianSecret
      ? { atlassian: new AtlassianOAuth({ clientId: atlassianId, clientSecret: atlassianSecret }, endpoints) }
      : {}),
    ...(entraId && entraSecret
      ? { entra: new EntraOAuth({ clientId: entraId, clientSecret: entraSecret }, endpoints) }
      : {}),
  };
}

export async function oauthProvider(name: OAuthProvider): Promise<OAuthProviderClient | undefined> {
  return (await oauthProviders())[name];
}
