/** The repositories over one table, built once per process (or per test table). */
import { adapterSlot } from '#platform/adapter-slot.ts';
import { BillingRepository } from './billing.ts';
import { ConnectionRepository } from './connections.ts';
import { DashboardConnectionRepository } from './dashboard-connections.ts';
import { IdMapRepository, RunFailureRepository } from './id-map.ts';
import { InvitationRepository } from './invitations.ts';
import { MappingsRepository } from './mappings.ts';
import { OAuthAttemptRepository } from './oauth-attempts.ts';
import { PluginEnablementRepository } from './plugins.ts';
import { ProjectRepository } from './projects.ts';
import { RateLimitRepository } from './rate-limits.ts';
import { RefreshTokenRepository } from './refresh-tokens.ts';
import { RunRepository } from './runs.ts';
import { ScanLeaseRepository } from './scan-leases.ts';
import { ScanRepository } from './scans.ts';
import { SiteLimitsRepository } from './site-limits.ts';
import { SsoRepository } from './sso.ts';
import { StreamLeaseRepository } from './stream-leases.ts';
import { defaultTable, type Table } from './table.ts';
import { TenantRepository } from './tenants.ts';
import { UserRepository } from './users.ts';
import { WriteJournalRepository } from './write-journal.ts';

export interface Store {
  /** The table itself, for what no repository offers (test set-up writes records directly). */
  readonly table: Table;
  tenants: TenantRepository;
  users: UserRepository;
  invitations: InvitationRepository;
  refreshTokens: RefreshTokenRepository;
  rateLimits: RateLimitRepository;
  projects: ProjectRepository;
  plugins: PluginEnablementRepository;
  billing: BillingRepository;
  connections: ConnectionRepository;
  scans: ScanRepository;
  /** The tenant's running background scans (their cap, one per project and per credential). */
  scanLeases: ScanLeaseRepository;
  runs: RunRepository;
  idMap: IdMapRepository;
  runFailures: RunFailureRepository;
  /** What each run wrote to issues it did not create, for its rollback (write-journal.ts). */
  writeJournal: WriteJournalRepository;
  mappings: MappingsRepository;
  oauthAttempts: OAuthAttemptRepository;
  sso: SsoRepository;
  streamLeases: StreamLeaseRepository;
  /** Each tracker site's shared limits: the runs working it, the rates it stated (site-limits.ts). */
  siteLimits: SiteLimitsRepository;
  dashboardConnections: DashboardConnectionRepository;
}

export function createStore(table: Table): Store {
  return {
    table,
    tenants: new TenantRepository(table),
    users: new UserRepository(table),
    invitations: new InvitationRepository(table),
    refreshTokens: new RefreshTokenRepository(table),
    rateLimits: new RateLimitRepository(table),
    projects: new ProjectRepository(table),
    plugins: new PluginEnablementRepository(table),
    billing: new BillingRepository(table),
    connections: new ConnectionRepository(table),
    scans: new ScanRepository(table),
    scanLeases: new ScanLeaseRepository(table),
    runs: new RunRepository(table),
    idMap: new IdMapRepository(table),
    runFailures: new RunFailureRepository(table),
    writeJournal: new WriteJournalRepository(table),
    mappings: new MappingsRepository(table),
    oauthAttempts: new OAuthAttemptRepository(table),
    sso: new SsoRepository(table),
    streamLeases: new StreamLeaseRepository(table),
    siteLimits: new SiteLimitsRepository(table),
    dashboardConnections: new DashboardConnectionRepository(table),
  };
}

/** The process's store over the configured table (see platform/adapter-slot.ts). */
export const store = adapterSlot(() => createStore(defaultTable()));
