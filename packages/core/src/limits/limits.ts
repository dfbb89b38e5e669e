import type { LimitOverrides } from '../ports/limit-overrides.js';

/** The spec's default limits (section "Limits"); an organization may override each. */
export const DEFAULT_LIMITS = {
  maxUploadBytes: 10_485_760,
  maxImageBytes: 10_485_760,
  maxImagesPerTurn: 10,
  maxImageBytesPerTurn: 33_554_432,
  maxAgents: 100,
  maxLiveKeys: 5,
} as const satisfies Required<Omit<LimitOverrides, 'rateLimits'>>;

export type Limits = { -readonly [K in keyof typeof DEFAULT_LIMITS]: number };

/** The limits in force for an organization: its overrides over the service defaults. */
export function resolveLimits(overrides: LimitOverrides, defaults: Limits = DEFAULT_LIMITS): Limits {
  const limits: Limits = { ...defaults };
  for (const [key, value] of Object.entries(overrides) as [keyof Limits | 'rateLimits', unknown][]) {
    // Request-rate windows are resolved apart (limits/rate-limits.ts).
    if (key !== 'rateLimits' && typeof value === 'number') limits[key] = value;
  }
  // Spec "Session": max_image_bytes_per_turn is always >= max_image_bytes.
  limits.maxImageBytesPerTurn = Math.max(limits.maxImageBytesPerTurn, limits.maxImageBytes);
  return limits;
}
