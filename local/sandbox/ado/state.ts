/** The Azure DevOps sandbox's mutable state: the configuration and the current generated world. */
import type { FastifyRequest } from 'fastify';
import type { SandboxConfig } from '../common/config.ts';
import { guidFrom, hashString } from '../generator/hash.ts';
import { type AdoWorld, generateAdoWorld } from '../generator/index.ts';

export interface AdoState {
  config: SandboxConfig;
  world: AdoWorld;
  /** The project's default team (`{project} Team`), which team-scoped routes accept by name or id. */
  teamName: string;
  teamId: string;
  /** The PAT owner (a person index): @me in WIQL, ChangedBy of PATCHes. Bearer tokens act as them too. */
  me: number;
  /** Whether a live Entra ID access token (`Authorization: Bearer`) authorises the request (entra.ts). */
  bearer?: (req: FastifyRequest) => boolean;
}

/** (Re)generates the world around `referenceDay` (midnight UTC). */
export function reseed(state: AdoState, items: number, seed: number, referenceDay: number): void {
  const { org, project } = state.config.ado;
  state.world = generateAdoWorld({ items, seed, org, project, referenceDay });
  state.teamName = `${project} Team`;
  state.teamId = guidFrom(seed, hashString(state.teamName));
  state.me = 0;
}
