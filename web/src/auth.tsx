/**
 * The session: who is signed in (from the access token's claims) and the sign-in / sign-out actions. The
 * token stays in memory (./api/client.ts); a reload signs back in through the refresh cookie.
 */
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { ApiError, api, onTokenChange, refreshSession, setAccessToken, unwrap } from './api/client';
import type { Role } from './api/roles';

export interface Session {
  email: string;
  role: Role;
  tenantId: string;
}

interface AuthState {
  session: Session | undefined;
  /** True until the first refresh attempt has answered. */
  loading: boolean;
  signIn(email: string, password: string): Promise<void>;
  signOut(): Promise<void>;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

function sessionOf(token: string | undefined): Session | undefined {
  if (!token) return undefined;
  try {
    const payload = token.split('.')[1] ?? '';
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
    return { email: String(json.email), role: json.role as Role, tenantId: String(json.tenantId) };
  } catch {
    return undefined;
  }
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [session, setSession] = useState<Session | undefined>();
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    const off = onTokenChange((t) => setSession(sessionOf(t)));
    void refreshSession().finally(() => setLoading(false));
    return off;
  }, []);

  const value: AuthState = {
    session,
    loading,
    async signIn(email, password) {
      const answer = unwrap(await api.POST('/api/auth/login', { body: { email, password } }));
      setAccessToken(answer.accessToken);
    },
    async signOut() {
      await api.POST('/api/auth/logout').catch(() => undefined);
      setAccessToken(undefined);
    },
  };
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const ctx = useContext(AuthContext);
  if (!ctx) throw new Error('useAuth outside AuthProvider');
  return ctx;
}

export type { Role };
export { ApiError };
