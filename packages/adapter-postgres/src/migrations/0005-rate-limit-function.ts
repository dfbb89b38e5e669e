/**
 * One statement per limited request: the rate-window check of `rateLimits.hit` as a PL/pgSQL
 * function (one round trip instead of BEGIN, lock, delete, count, insert, COMMIT). It takes the
 * same transaction-scoped advisory locks, in sorted order; inside a volatile function each
 * statement reads a fresh snapshot, so the count after the lock sees every hit committed before it.
 * Returns, per window key in the order given, the hits counted before this one and the oldest of
 * them, and whether this hit was admitted (and recorded in every window).
 */
export const storeMigration0005 = `
CREATE FUNCTION rate_limit_hit(p_keys text[], p_limits integer[], p_since bigint[], p_now bigint)
RETURNS TABLE (key text, n bigint, oldest bigint, admitted boolean)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_n bigint[];
  v_oldest bigint[];
  v_refused boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(s.k)) FROM (SELECT DISTINCT unnest(p_keys) AS k ORDER BY 1) AS s;
  DELETE FROM rate_limit_hits h USING unnest(p_keys, p_since) AS w(k, since) WHERE h.key = w.k AND h.at_ms <= w.since;
  SELECT array_agg(coalesce(c.n, 0) ORDER BY w.ord), array_agg(c.oldest ORDER BY w.ord)
    INTO v_n, v_oldest
    FROM unnest(p_keys) WITH ORDINALITY AS w(k, ord)
    LEFT JOIN LATERAL (SELECT count(*) AS n, min(r.at_ms) AS oldest FROM rate_limit_hits r WHERE r.key = w.k) AS c ON true;
  SELECT EXISTS (SELECT 1 FROM generate_subscripts(p_keys, 1) AS i WHERE v_n[i] >= p_limits[i]) INTO v_refused;
  IF NOT v_refused THEN
    INSERT INTO rate_limit_hits (key, at_ms) SELECT k, p_now FROM unnest(p_keys) AS k;
  END IF;
  RETURN QUERY SELECT w.k, v_n[w.ord::integer], v_oldest[w.ord::integer], NOT v_refused FROM unnest(p_keys) WITH ORDINALITY AS w(k, ord) ORDER BY w.ord;
END
$fn$;
`;
