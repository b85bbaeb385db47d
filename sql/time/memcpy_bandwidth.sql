-- memcpy_bandwidth: bandwidth of the device's copies and memsets over time, per direction.
-- Answers: how many bytes per second is each device moving host-to-device, device-to-host,
-- device-to-device, peer-to-peer and in memsets, at any moment — are copies bunched up or
-- spread out, and how close do they come to the link's bandwidth?
-- depends: kernels, events, traces
-- Rule (HTA's "memory bandwidth" counter): each copy (kernels rows of cat gpu_memcpy or
-- gpu_memset) adds its rate to its (trace_id, device, direction) while it runs, from ts_ns
-- to ts_ns + its duration as written (kernels.dur_raw_ns: not cut where the next event on
-- the stream starts); copies that run at once add up. The rate is the trace's own
-- 'memory bandwidth (GB/s)' arg where it has one (Kineto computes it from the copy's
-- duration before rounding it for the trace: traces that write whole µs make a 1.8 µs copy
-- 1 µs long, and bytes / dur would then be 1.8x too high), else bytes / duration, bytes
-- being the event's 'bytes' arg (events.bytes_moved; rocprofv3 copies take this way).
-- Copies with neither (some ROCm traces leave both out) or with a duration of 0 or less
-- cover no time at a known rate and are left out.
-- direction: 'memset' for memsets; for copies the token after 'Memcpy ' in the name
-- (Kineto: HtoD, DtoH, DtoD, PtoP, HtoH, …), rocprofv3's MEMORY_COPY_<SRC>_TO_<DST>
-- operations as the same tokens (HOST_TO_DEVICE -> HtoD, …), else 'other'.
-- A step function: one row per time some copy of that device and direction starts or ends;
-- the value holds from ts_ns until end_ns (the next row); the last row of each series has
-- bandwidth 0 and end_ns null.
-- Columns:
--   trace_id     INTEGER  trace
--   rank         INTEGER  rank (null when unknown)
--   device       BIGINT   device id
--   direction    VARCHAR  HtoD, DtoH, DtoD, PtoP, HtoH, memset, … (see above)
--   ts_ns        BIGINT   ns, time of the change
--   end_ns       BIGINT   ns, time of the next change (null on the last row)
--   copies       BIGINT   copies of this device and direction running from ts_ns on
--   bytes_per_s  DOUBLE   bytes/s (1 GB/s = 1e9 bytes/s), sum of their rates; exactly 0 when none runs
CREATE OR REPLACE VIEW memcpy_bandwidth AS
WITH sized AS (
    SELECT trace_id, uid, bytes_moved AS nbytes,
           coalesce(memory_bandwidth_gb_per_s::DOUBLE,
                    TRY_CAST(json_extract_string(args, '$."memory bandwidth (GB/s)"') AS DOUBLE)) AS gb_per_s
    FROM events
    WHERE cat IN ('gpu_memcpy', 'gpu_memset')
),
copies AS (
    SELECT k.trace_id, k.device, k.ts_ns, k.ts_ns + k.dur_raw_ns AS end_ns,
           coalesce(s.gb_per_s * 1e9, s.nbytes * 1e9 / k.dur_raw_ns) AS rate,
           CASE WHEN k.cat = 'gpu_memset' THEN 'memset'
                WHEN regexp_matches(k.name, '^Memcpy [A-Za-z]+') THEN regexp_extract(k.name, '^Memcpy ([A-Za-z]+)', 1)
                WHEN k.name = 'MEMORY_COPY_HOST_TO_DEVICE' THEN 'HtoD'
                WHEN k.name = 'MEMORY_COPY_DEVICE_TO_HOST' THEN 'DtoH'
                WHEN k.name = 'MEMORY_COPY_DEVICE_TO_DEVICE' THEN 'DtoD'
                WHEN k.name = 'MEMORY_COPY_HOST_TO_HOST' THEN 'HtoH'
                WHEN k.name = 'MEMORY_COPY_PEER_TO_PEER' THEN 'PtoP'
                ELSE 'other' END AS direction
    FROM kernels k JOIN sized s ON s.trace_id = k.trace_id AND s.uid = k.uid
    WHERE k.cat IN ('gpu_memcpy', 'gpu_memset') AND k.ts_ns IS NOT NULL AND k.dur_raw_ns > 0
      AND (s.gb_per_s IS NOT NULL OR s.nbytes IS NOT NULL)
),
changes AS (  -- all changes at one time become one step
    SELECT trace_id, device, direction, ts_ns, sum(d_rate) AS d_rate, sum(d_n) AS d_n
    FROM (SELECT trace_id, device, direction, ts_ns, rate AS d_rate, 1 AS d_n FROM copies
          UNION ALL
          SELECT trace_id, device, direction, end_ns, -rate, -1 FROM copies)
    GROUP BY trace_id, device, direction, ts_ns
),
steps AS (
    SELECT *,
           sum(d_rate) OVER w AS running,
           sum(d_n) OVER w AS copies,
           lead(ts_ns) OVER (PARTITION BY trace_id, device, direction ORDER BY ts_ns) AS end_ns
    FROM changes
    WINDOW w AS (PARTITION BY trace_id, device, direction ORDER BY ts_ns ROWS UNBOUNDED PRECEDING)
)
-- the running sum of +rate/-rate leaves rounding dust where nothing runs: 0 there, exactly
SELECT s.trace_id, t.rank, s.device, s.direction, s.ts_ns, s.end_ns, s.copies::BIGINT AS copies,
       CASE WHEN s.copies = 0 THEN 0.0 ELSE s.running END::DOUBLE AS bytes_per_s
FROM steps s LEFT JOIN traces t ON t.trace_id = s.trace_id
ORDER BY s.trace_id, s.device, s.direction, s.ts_ns;
