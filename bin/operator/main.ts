/**
 * The operator CLI: tenants, users and plugin enablement, outside the tenant-facing API. One run of it with the
 * arguments, environment and output it is given (OperatorIo): bin/operator.ts runs it with the process's own, the
 * tests inside their own process. It reads and sets nothing of the process's: the environment below is the one
 * given (copied, so the defaults it adds stay its own).
 *
 * Where it writes: DYNAMODB_ENDPOINT when set (a DynamoDB Local), else an AWS table when TABLE_NAME is set
 * (region and credentials from the usual AWS environment), else the running `npm start` store
 * (http://127.0.0.1:$DYNAMODB_PORT, table tracker-migration-local).
 *
 * Plugin configurations are sealed with the credentials cipher the engine opens them with: CREDENTIALS_KMS_KEY_ID
 * for an AWS table, CREDENTIALS_KEY / CREDENTIALS_KEY_FILE, or else the local store's key in $DATA_DIR.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PLUGIN_KEYS } from '../../functions/domain/plugins.ts';
import type { PluginDefinition } from '../../functions/phase-kit/context.ts';
import { cipherFromEnv } from '../../functions/platform/credentials-cipher.ts';
import { ROLES } from '../../functions/platform/tokens.ts';
import {
  createTenant,
  createUser,
  listUsers,
  OperatorError,
  setPluginEnabled,
} from '../../functions/services/operator.ts';
import { createDocumentClient } from '../../functions/store/client.ts';
import { createStore, type Store } from '../../functions/store/index.ts';
import { allowLoopbackPortsIn, SANDBOX_DEFAULT_PORTS } from '../../local/loopback-ports.ts';
// Not from local/runtime.ts: that would load the whole local service (gateway, sandboxes) into every command.
import { LOCAL_TABLE_NAME } from '../../local/table.ts';

type Env = Record<string, string | undefined>;

/** What one run reads and writes. */
export interface OperatorIo {
  argv: string[];
  env: Readonly<Env>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** The engine's plugins (default: functions/plugins/index.ts, loaded when a plugin is enabled). */
  plugins?: readonly PluginDefinition[];
}

const USAGE = `Usage: npm run operator -- <command> [options]

  tenant create --name NAME                 create a tenant; prints its id
  tenant list                               list tenants
  user create --tenant ID --email E --password P --role ${ROLES.join('|')}
                                            create a user; prints its id
  user list --tenant ID                     list a tenant's users
  plugin enable  --tenant ID --plugin KEY [--config-file FILE | --config JSON]
                                            enable a plugin (${PLUGIN_KEYS.join(', ')}) with its
                                            configuration, checked and stored sealed (replaces any
                                            earlier one); prefer --config-file for credentials
  plugin disable --tenant ID --plugin KEY   disable a plugin (its configuration is deleted)
  plugin list --tenant ID                   list a tenant's enabled plugins (configured: yes/no;
                                            a configuration is never shown)

Options: --json prints JSON. Target: DYNAMODB_ENDPOINT, or TABLE_NAME for an AWS table, or the local store.`;

class UsageError extends Error {}

/**
 * Offline, the operator seals with the key `npm start` keeps in its data directory, so the engine there opens
 * what the operator stored. Any cipher configured in the environment wins.
 */
function defaultLocalCipherKey(env: Env): void {
  if (env.CREDENTIALS_KMS_KEY_ID || env.CREDENTIALS_KEY || env.CREDENTIALS_KEY_FILE) return;
  const file = join(env.DATA_DIR ?? '.data', 'credentials-key');
  if (existsSync(file)) env.CREDENTIALS_KEY_FILE = file;
}

/** The configuration given on the command line, parsed; undefined when none. Never echoed back. */
function configOption(values: { config?: string; 'config-file'?: string }): unknown {
  if (values.config !== undefined && values['config-file'] !== undefined)
    throw new UsageError('give --config or --config-file, not both');
  let text: string;
  let from: string;
  if (values['config-file'] !== undefined) {
    from = values['config-file'];
    try {
      text = readFileSync(from, 'utf8');
    } catch (err) {
      throw new OperatorError(`cannot read ${from}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  } else if (values.config !== undefined) {
    from = '--config';
    text = values.config;
  } else return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error: it may be a secret.
    throw new OperatorError(`${from} is not valid JSON`);
  }
}

function target(env: Env) {
  // A DynamoDB Local is the offline runtime's store: its plugins' services are the sandboxes `npm start` runs on
  // loopback, which the outbound policy accepts on their ports only (functions/outbound/rules.ts).
  if (!env.TABLE_NAME || env.DYNAMODB_ENDPOINT)
    allowLoopbackPortsIn(
      env,
      Number(env.SANDBOX_ADO_PORT ?? SANDBOX_DEFAULT_PORTS.ado),
      Number(env.SANDBOX_JIRA_PORT ?? SANDBOX_DEFAULT_PORTS.jira),
    );
  if (env.DYNAMODB_ENDPOINT) {
    return {
      endpoint: env.DYNAMODB_ENDPOINT,
      table: env.TABLE_NAME ?? LOCAL_TABLE_NAME,
      region: env.AWS_REGION ?? 'eu-west-2',
    };
  }
  if (env.TABLE_NAME)
    return { endpoint: undefined, table: env.TABLE_NAME, region: env.AWS_REGION ?? 'eu-west-2' };
  return {
    endpoint: `http://127.0.0.1:${env.DYNAMODB_PORT ?? '8000'}`,
    table: LOCAL_TABLE_NAME,
    region: 'eu-west-2',
  };
}

function required(values: Record<string, unknown>, ...names: string[]): string[] {
  const missing = names.filter((n) => typeof values[n] !== 'string' || values[n] === '');
  if (missing.length) throw new UsageError(`missing ${missing.map((n) => `--${n}`).join(', ')}`);
  return names.map((n) => values[n] as string);
}

/** How a command is run: its store, its environment and plugins, and where it prints. */
interface Invocation {
  store: Store;
  env: Env;
  io: OperatorIo;
}

async function run({ store, env, io }: Invocation): Promise<void> {
  const print = (json: boolean, value: unknown, text: string): void => {
    io.stdout.write(`${json ? JSON.stringify(value, null, 2) : text}\n`);
  };
  const { values, positionals } = parseArgs({
    args: io.argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      tenant: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      role: { type: 'string' },
      plugin: { type: 'string' },
      config: { type: 'string' },
      'config-file': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const json = values.json ?? false;
  const command = positionals.join(' ');
  switch (command) {
    case 'tenant create': {
      const [name] = required(values, 'name');
      const tenant = await createTenant(store, { name: name as string });
      return print(json, tenant, tenant.id);
    }
    case 'tenant list': {
      const tenants = await store.tenants.list();
      return print(
        json,
        tenants,
        tenants.map((t) => `${t.id}  ${t.createdAt}  ${t.name}`).join('\n') || '(no tenants)',
      );
    }
    case 'user create': {
      const [tenantId, email, password, role] = required(values, 'tenant', 'email', 'password', 'role') as [
        string,
        string,
        string,
        string,
      ];
      const user = await createUser(store, { tenantId, email, password, role });
      const { passwordHash: _omit, ...shown } = user;
      return print(json, shown, user.id);
    }
    case 'user list': {
      const [tenantId] = required(values, 'tenant') as [string];
      const users = (await listUsers(store, tenantId)).map(({ passwordHash: _omit, ...u }) => u);
      return print(
        json,
        users,
        users.map((u) => `${u.id}  ${u.role.padEnd(6)}  ${u.email}`).join('\n') || '(no users)',
      );
    }
    case 'plugin enable':
    case 'plugin disable': {
      const [tenantId, pluginKey] = required(values, 'tenant', 'plugin') as [string, string];
      const enabled = command === 'plugin enable';
      const config = configOption(values);
      await setPluginEnabled(store, { tenantId, pluginKey, config }, enabled, {
        ...(io.plugins ? { definitions: io.plugins } : {}),
        cipher: () => cipherFromEnv(env),
        env,
      });
      return print(
        json,
        { tenantId, pluginKey, enabled },
        `${pluginKey} ${enabled ? 'enabled' : 'disabled'} for ${tenantId}`,
      );
    }
    case 'plugin list': {
      const [tenantId] = required(values, 'tenant') as [string];
      const plugins = await store.plugins.list(tenantId);
      return print(
        json,
        plugins,
        plugins
          .map((p) => `${p.pluginKey}  ${p.enabledAt}  ${p.configured ? 'configured' : 'not configured'}`)
          .join('\n') || '(none enabled)',
      );
    }
    default:
      if (values.help) return void io.stdout.write(`${USAGE}\n`);
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

/** One run of the operator CLI; resolves to its exit code (0 ok, 1 refused or failed, 2 usage). */
export async function runOperator(io: OperatorIo): Promise<number> {
  const env: Env = { ...io.env };
  const t = target(env);
  // Only offline: an AWS table's configurations must be sealed with its KMS key (CREDENTIALS_KMS_KEY_ID).
  if (t.endpoint) defaultLocalCipherKey(env);
  const db = createDocumentClient({ region: t.region, endpoint: t.endpoint });
  const error = (text: string) => io.stderr.write(`${text}\n`);
  try {
    await run({ store: createStore({ db, name: t.table }), env, io });
    return 0;
  } catch (err) {
    if (err instanceof UsageError || (err instanceof TypeError && 'code' in err)) {
      error(`error: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof OperatorError) {
      error(`error: ${err.message}`);
      return 1;
    }
    const e = err as Error & { code?: string; cause?: { code?: string } };
    if (e.name === 'ResourceNotFoundException') {
      error(`error: table ${t.table} does not exist${t.endpoint ? ` at ${t.endpoint}` : ''}`);
    } else if (
      e.code === 'ECONNREFUSED' ||
      e.cause?.code === 'ECONNREFUSED' ||
      /ECONNREFUSED/.test(String(e.message))
    ) {
      error(`error: cannot reach DynamoDB at ${t.endpoint}: is the service running (npm start)?`);
    } else {
      error(`error: ${e.name}: ${e.message}`);
    }
    return 1;
  } finally {
    db.destroy();
  }
}
