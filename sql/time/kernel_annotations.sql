-- kernel_annotations: each device event with the user annotations it ran under.
-- Answers: which record_function range (a model phase, a layer, a ProfilerStep) does each
-- kernel belong to — as seen on the device, and as seen from the host call that launched it?
-- depends: kernels, _annotations, traces
-- Rules (see _annotations): gpu_annotation is the innermost `gpu_user_annotation` on the
-- kernel's own device and stream whose time range holds the kernel's start; host_annotation
-- is the innermost `user_annotation` above the kernel's launch call in the host tree (null for
-- kernels without a launch call in the trace). ProfilerStep#N annotations count like any other.
-- The two usually name the same range: Kineto writes a device annotation over the device work
-- of each host range; they differ where a range launched nothing on that stream.
-- Columns (one row per device event of `kernels`):
--   trace_id             INTEGER  trace
--   rank                 INTEGER  rank (null when unknown)
--   uid                  BIGINT   the device event
--   name                 VARCHAR  its name
--   device               BIGINT   device id
--   stream               BIGINT   stream id
--   ts_ns                BIGINT   ns, start
--   dur_ns               BIGINT   ns, duration
--   launch_uid           BIGINT   its launch call (null when not linked)
--   gpu_annotation_uid   BIGINT   innermost enclosing gpu_user_annotation (null for none)
--   gpu_annotation       VARCHAR  its name
--   host_annotation_uid  BIGINT   innermost user_annotation above the launch call (null for none)
--   host_annotation      VARCHAR  its name
CREATE OR REPLACE VIEW kernel_annotations AS
SELECT k.trace_id, t.rank, k.uid, k.name, k.device, k.stream, k.ts_ns, k.dur_ns, k.launch_uid,
       g.enclosing_uid AS gpu_annotation_uid, ga.name AS gpu_annotation,
       h.enclosing_uid AS host_annotation_uid, ha.name AS host_annotation
FROM kernels k
LEFT JOIN traces t ON t.trace_id = k.trace_id
LEFT JOIN _annotations g ON g.trace_id = k.trace_id AND g.side = 'device' AND g.kind = 'kernel' AND g.uid = k.uid
LEFT JOIN _annotations ga ON ga.trace_id = k.trace_id AND ga.side = 'device' AND ga.kind = 'annotation'
                         AND ga.uid = g.enclosing_uid
LEFT JOIN _annotations h ON h.trace_id = k.trace_id AND h.side = 'host' AND h.kind = 'kernel' AND h.uid = k.uid
LEFT JOIN _annotations ha ON ha.trace_id = k.trace_id AND ha.side = 'host' AND ha.kind = 'annotation'
                         AND ha.uid = h.enclosing_uid
ORDER BY k.trace_id, k.device, k.stream, k.ts_ns, k.uid;
