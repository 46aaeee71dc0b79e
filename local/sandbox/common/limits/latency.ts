/**
 * Per-call latency with a long tail: a log-normal distribution fitted to a median and a 95th percentile
 * (ln X ~ N(mu, sigma) with mu = ln(median), sigma = ln(p95 / median) / 1.645), plus transfer time by size for
 * uploads and downloads. Real trackers answer a read in ~100 ms and a write in a few hundred, with rare seconds-long
 * stragglers; the defaults below are in that range (docs/engine-and-limits.md).
 */
import { z } from 'zod';
import type { Random } from '../random.ts';

const Percentiles = z.strictObject({
  medianMs: z.number().min(0).max(60_000),
  p95Ms: z.number().min(0).max(120_000),
});
export const LatencySettingsSchema = z.strictObject({
  read: Percentiles,
  write: Percentiles,
  /** Added per MiB of an upload's request body or a download's answer. */
  transferMsPerMiB: z.number().min(0).max(60_000),
});
export type LatencySettings = z.infer<typeof LatencySettingsSchema>;

export const NO_LATENCY: LatencySettings = {
  read: { medianMs: 0, p95Ms: 0 },
  write: { medianMs: 0, p95Ms: 0 },
  transferMsPerMiB: 0,
};

const Z95 = 1.6449;

/** One draw from the log-normal with this median and p95 (never below 0; the median alone when p95 <= median). */
export function drawLatencyMs(p: { medianMs: number; p95Ms: number }, random: Random): number {
  if (p.medianMs <= 0) return 0;
  if (p.p95Ms <= p.medianMs) return p.medianMs;
  const sigma = Math.log(p.p95Ms / p.medianMs) / Z95;
  // Box-Muller from two uniform draws; (0, 1] keeps the logarithm finite.
  const u1 = 1 - random.next();
  const u2 = random.next();
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  // Capped at 20x the median: a tail, not a hang.
  return Math.min(p.medianMs * 20, p.medianMs * Math.exp(sigma * normal));
}

/** Transfer time for `bytes` at the setting's pace. */
export const transferMs = (settings: LatencySettings, bytes: number) =>
  (settings.transferMsPerMiB * bytes) / (1024 * 1024);
