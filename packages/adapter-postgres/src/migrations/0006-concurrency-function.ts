/**
 * One statement per answer place: `rateLimits.acquire` as a PL/pgSQL function (one round trip
 * instead of BEGIN, lock, delete, count, insert, COMMIT), like `rate_limit_hit` (migration 5). It
 * takes the same transaction-scoped advisory locks per key, in sorted order, forgets expired
 * places, and takes a place under every key only when each has room for this holder. Returns the
 * first key (in the order given) without room, or NULL when the places were taken.
 */
export const storeMigration0006 = `
CREATE FUNCTION concurrency_acquire(p_keys text[], p_limits integer[], p_holder text, p_expires bigint, p_now bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_refused text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(s.k)) FROM (SELECT DISTINCT unnest(p_keys) AS k ORDER BY 1) AS s;
  DELETE FROM concurrency_places WHERE key = ANY(p_keys) AND expires_at <= p_now;
  SELECT w.k INTO v_refused
    FROM unnest(p_keys, p_limits) WITH ORDINALITY AS w(k, lim, ord)
    WHERE (SELECT count(*) FROM concurrency_places c WHERE c.key = w.k AND c.holder <> p_holder) >= w.lim
    ORDER BY w.ord
    LIMIT 1;
  IF v_refused IS NULL THEN
    INSERT INTO concurrency_places (key, holder, expires_at) SELECT k, p_holder, p_expires FROM unnest(p_keys) AS k
      ON CONFLICT (key, holder) DO UPDATE SET expires_at = EXCLUDED.expires_at;
  END IF;
  RETURN v_refused;
END
$fn$;
`;
