-- _device_models: helper — the one definition of "the model of device d of trace t", for every
-- view that needs a device's name or datasheet peaks (op_perf, kernel_perf) and for
-- `tracecols info` and the unknown-device notes.
-- Answers: what is each device of each trace, where does that answer come from, and which
-- row of the device peak table (device_specs) describes it?
-- depends: devices, kernels, device_specs
-- Devices: every device listed in the trace's deviceProperties, and every device that ran work
-- (kernels.device). The name is the listed one when the device is listed with a name; else,
-- when the trace's deviceProperties name exactly one device type (one distinct non-empty
-- name), that type is assumed: ROCm traces list device 0 alone (or ids 0..n-1) while their
-- kernels carry another device id (2, 9, …). With no listed name and several types (or none)
-- the device stays unnamed. The model is the first device_specs row (file order) whose `match`
-- matches the name, case-insensitively.
-- Columns (one row per (trace_id, device)):
--   trace_id      INTEGER  trace
--   device        BIGINT   device id (deviceProperties id, or kernels.device)
--   name          VARCHAR  device name: listed, or assumed (null when unknown)
--   name_source   VARCHAR  'listed' or 'assumed: only device type in the trace' (null when no name)
--   model         VARCHAR  device_specs model for that name (null when the table has none)
--   ran_work      BOOLEAN  the device has device events in kernels
CREATE OR REPLACE VIEW _device_models AS
WITH listed AS (  -- one row per listed id (a repeated id keeps its first name in sort order)
    SELECT trace_id, device, min(nullif(name, '')) AS name
    FROM devices WHERE device IS NOT NULL
    GROUP BY trace_id, device
),
only_type AS (  -- traces whose deviceProperties name exactly one device type
    SELECT trace_id, min(name) AS name
    FROM devices WHERE coalesce(name, '') <> ''
    GROUP BY trace_id HAVING count(DISTINCT name) = 1
),
used AS (SELECT DISTINCT trace_id, device FROM kernels WHERE device IS NOT NULL),
named AS (
    SELECT a.trace_id, a.device,
           CASE WHEN l.name IS NOT NULL THEN l.name ELSE o.name END AS name,
           CASE WHEN l.name IS NOT NULL THEN 'listed'
                WHEN o.name IS NOT NULL THEN 'assumed: only device type in the trace' END AS name_source,
           u.device IS NOT NULL AS ran_work
    FROM (SELECT trace_id, device FROM listed UNION SELECT trace_id, device FROM used) a
    LEFT JOIN listed l ON l.trace_id = a.trace_id AND l.device = a.device
    LEFT JOIN only_type o ON o.trace_id = a.trace_id
    LEFT JOIN used u ON u.trace_id = a.trace_id AND u.device = a.device
),
spec AS (SELECT model, match, min(priority) AS p FROM device_specs GROUP BY model, match),
matched AS (
    SELECT n.trace_id, n.device, s.model
    FROM named n JOIN spec s ON regexp_matches(n.name, s.match, 'i')
    QUALIFY row_number() OVER (PARTITION BY n.trace_id, n.device ORDER BY s.p) = 1
)
SELECT n.trace_id, n.device, n.name, n.name_source, m.model, n.ran_work
FROM named n
LEFT JOIN matched m ON m.trace_id = n.trace_id AND m.device = n.device
ORDER BY n.trace_id, n.device;
