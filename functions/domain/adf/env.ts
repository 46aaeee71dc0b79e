/** What every conversion step shares: the caller's resolvers and a way to report what could not be kept. */
import type { AdfWarning, HtmlToAdfContext } from './types.ts';

export interface Env {
  ctx: HtmlToAdfContext;
  warn(code: AdfWarning['code'], message: string): void;
}

export const envFor = (ctx: HtmlToAdfContext = {}): Env => ({
  ctx,
  warn: (code, message) => ctx.warn?.({ code, message }),
});
