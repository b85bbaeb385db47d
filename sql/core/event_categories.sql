-- event_categories: the events of each trace counted by category and phase.
-- Answers: what a trace is made of — how many events of each kind, and the time they cover.
-- Columns (per trace: the most events first; ties by total duration, then category and phase):
--   trace_id        INTEGER  trace
--   cat             VARCHAR  category as written in the trace ('(none)' when it has none)
--   ph              VARCHAR  phase (X complete, i instant, C counter, s/f flow, M metadata, …)
--   events          BIGINT   number of events
--   total_dur_ns    BIGINT   ns, sum of their durations (a negative duration, counted in the
--                            trace's warnings, adds nothing; null when none has a duration)
CREATE OR REPLACE VIEW event_categories AS
SELECT trace_id, coalesce(cat, '(none)') AS cat, ph, count(*) AS events,
       sum(greatest(dur_ns, 0))::BIGINT AS total_dur_ns
FROM events
GROUP BY ALL
ORDER BY trace_id, events DESC, total_dur_ns DESC NULLS LAST, cat, ph;
