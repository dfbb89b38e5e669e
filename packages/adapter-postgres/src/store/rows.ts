/** A row as the drivers hand it over. */
export type Row = Record<string, unknown>;

/** A `timestamptz` (a Date from node-postgres, a string elsewhere) as an ISO date-time. */
export const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();
export const isoOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : iso(value));

/** A value as a `jsonb` parameter. */
export const json = (value: unknown) => JSON.stringify(value);
