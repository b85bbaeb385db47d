-- flows: the flow arrows of the trace (ph s → f, with any t steps), one row per arrow.
-- Answers: which event starts and which ends each flow (Kineto's ac2g launch→kernel arrows,
-- fwdbwd forward→backward arrows), keyed the way the trace writes them.
-- A flow is matched within one trace and category by its id; when an id is reused, the
-- k-th start pairs with the k-th finish in time order.
-- Columns:
--   trace_id   INTEGER  trace the flow belongs to
--   cat        VARCHAR  normalised flow category (ac2g, fwdbwd, …); cat_raw keeps the original
--   cat_raw    VARCHAR  category as written
--   flow_id    BIGINT   the flow id (`id`); flow_id_str when the trace wrote a string
--   flow_id_str VARCHAR
--   src_uid    BIGINT   uid of the 's' event (null when the flow has no start)
--   dst_uid    BIGINT   uid of the 'f' event (null when the flow has no finish)
--   src_pid, src_tid, dst_pid, dst_tid BIGINT  where each end sits
--   src_ts_ns, dst_ts_ns BIGINT  ns, the two ends' timestamps
--   bp         VARCHAR  binding point of the finish ('e': enclosing slice)
--   n_steps    BIGINT   number of 't' step events with the same id
CREATE OR REPLACE VIEW flows AS
WITH f AS (
    SELECT trace_id, uid, ph, cat, cat_raw, flow_id, flow_id_str, pid, tid, ts_ns, bp,
           row_number() OVER (PARTITION BY trace_id, cat_raw, flow_id, flow_id_str, ph ORDER BY ts_ns, uid) AS k
    FROM events
    WHERE ph IN ('s', 'f', 't')
),
s AS (SELECT * FROM f WHERE ph = 's'),
e AS (SELECT * FROM f WHERE ph = 'f'),
t AS (SELECT trace_id, cat_raw, flow_id, flow_id_str, count(*) AS n_steps FROM f WHERE ph = 't' GROUP BY ALL)
SELECT coalesce(s.trace_id, e.trace_id) AS trace_id,
       coalesce(s.cat, e.cat) AS cat,
       coalesce(s.cat_raw, e.cat_raw) AS cat_raw,
       coalesce(s.flow_id, e.flow_id) AS flow_id,
       coalesce(s.flow_id_str, e.flow_id_str) AS flow_id_str,
       s.uid AS src_uid, e.uid AS dst_uid,
       s.pid AS src_pid, s.tid AS src_tid, e.pid AS dst_pid, e.tid AS dst_tid,
       s.ts_ns AS src_ts_ns, e.ts_ns AS dst_ts_ns,
       e.bp,
       coalesce(t.n_steps, 0) AS n_steps
FROM s
FULL OUTER JOIN e
  ON s.trace_id = e.trace_id AND s.cat_raw IS NOT DISTINCT FROM e.cat_raw
 AND s.flow_id IS NOT DISTINCT FROM e.flow_id AND s.flow_id_str IS NOT DISTINCT FROM e.flow_id_str AND s.k = e.k
LEFT JOIN t
  ON t.trace_id = coalesce(s.trace_id, e.trace_id) AND t.cat_raw IS NOT DISTINCT FROM coalesce(s.cat_raw, e.cat_raw)
 AND t.flow_id IS NOT DISTINCT FROM coalesce(s.flow_id, e.flow_id)
 AND t.flow_id_str IS NOT DISTINCT FROM coalesce(s.flow_id_str, e.flow_id_str)
ORDER BY trace_id, coalesce(src_uid, dst_uid), dst_uid;
