-- kernel_launch_stats: every device event next to the host call that launched it (HTA's CUDA
-- kernel launch statistics).
-- Answers: how long did each launch call take on the CPU, how long did its work run on the
-- device, how long did the work wait after the call returned, and which kernels are shorter
-- than their own launch?
-- depends: kernels, slices
-- One row per device event (kernel, memcpy, memset) linked to a launch call
-- (`kernels.launch_uid`, by correlation or flow); unlinked events are left out. A graph launch
-- gives one row per device event it launched, each with the whole graph launch call.
--   launch_delay_ns = start of the device event - end of its launch call (HTA's launch delay);
--                     negative when the device started the work before the call returned.
--   short           = gpu_dur_ns < cpu_dur_ns (HTA's "short GPU kernels": the work ran for
--                     less time than it took the CPU to launch it).
-- Columns:
--   trace_id         INTEGER  trace
--   rank             INTEGER  rank (null when unknown)
--   device           BIGINT   device id
--   stream           BIGINT   stream id
--   uid              BIGINT   the device event
--   name             VARCHAR  its name
--   cat              VARCHAR  kernel / gpu_memcpy / gpu_memset
--   launch_uid       BIGINT   the launch call (runtime or driver slice)
--   launch_name      VARCHAR  its name: cudaLaunchKernel, hipLaunchKernel, cuLaunchKernel, cudaGraphLaunch, cudaMemcpyAsync, …
--   ts_ns            BIGINT   ns, start of the device event
--   launch_end_ns    BIGINT   ns, end of the launch call
--   cpu_dur_ns       BIGINT   ns, duration of the launch call
--   gpu_dur_ns       BIGINT   ns, duration of the device event (kernels.dur_ns)
--   launch_delay_ns  BIGINT   ns, ts_ns - launch_end_ns
--   short            BOOLEAN  gpu_dur_ns < cpu_dur_ns
CREATE OR REPLACE VIEW kernel_launch_stats AS
SELECT k.trace_id, k.rank, k.device, k.stream, k.uid, k.name, k.cat, k.launch_uid, s.name AS launch_name,
       k.ts_ns, s.end_ns AS launch_end_ns, s.dur_ns AS cpu_dur_ns, k.dur_ns AS gpu_dur_ns,
       (k.ts_ns - s.end_ns)::BIGINT AS launch_delay_ns,
       k.dur_ns < s.dur_ns AS short
FROM kernels k JOIN slices s ON s.trace_id = k.trace_id AND s.uid = k.launch_uid
ORDER BY k.trace_id, k.device, k.ts_ns, k.uid;
