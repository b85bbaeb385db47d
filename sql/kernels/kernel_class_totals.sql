-- kernel_class_totals: kernel_class_stats added up by class over devices and traces.
-- Answers: over all traces together (every rank of a lake), how does device time split between
-- GEMMs, attention, convolutions, norms, elementwise work, communication and copies?
-- depends: kernel_class_stats
-- One row per kernel class (null: events the classifier left without one).
-- Columns (by total duration, descending, then class):
--   kernel_class  VARCHAR  class (see kernel_stats)
--   count         BIGINT   number of events
--   sum_ns        BIGINT   ns, total duration
--   share_pct     DOUBLE   % (0-100) of the summed duration of all device events of all traces
CREATE OR REPLACE VIEW kernel_class_totals AS
WITH c AS (
    SELECT kernel_class, sum(count)::BIGINT AS count, sum(sum_ns)::BIGINT AS sum_ns
    FROM kernel_class_stats GROUP BY kernel_class
)
SELECT kernel_class, count, sum_ns, 100 * sum_ns::DOUBLE / nullif(sum(sum_ns) OVER (), 0)::DOUBLE AS share_pct
FROM c
ORDER BY sum_ns DESC, kernel_class;
