/**
 * The token of an `Authorization: Bearer <token>` header, or null. The scheme is matched in any
 * case (RFC 9110 section 11.1: `bearer`, `BEARER` are the same scheme); the token is taken as
 * sent. The same rule as the `/v1` API's (core's `authenticate`).
 */
export function bearerToken(authorization: string | undefined): string | null {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? null;
}
