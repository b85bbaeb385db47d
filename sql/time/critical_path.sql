-- critical_path: the longest chain of dependencies through each profiler step, one row per segment, in order.
-- Answers: what does the step's time wait on — which host ops, kernels, launch delays and gaps
-- between kernels make up its critical path, and is each part bound by the CPU, GPU compute,
-- GPU communication, kernel launch overhead, kernel-kernel overhead or data loading?
-- depends: critical_path_edges, slices, kernels
-- The path is computed at ingest (model/cp_graph.py, model/longest_path.py; docs/analyses.md):
-- per window — each ProfilerStep#N, or the whole trace when it has none — a graph of the starts
-- and ends of host ops and runtime calls (nested per thread), of kernels/memcpy/memset (in order
-- per stream), of the launches that started a kernel on an empty stream and of the waits of
-- synchronisations, whose longest path is taken (HTA's critical path analysis). Its total is
-- the sum of dur_ns; the time between outermost ops and inside blocking calls counts 0.
-- bound_by, per segment:
--   cpu_bound                time in a host call (kind cpu)
--   data_loading             the same, inside an `enumerate(DataLoader)#…` annotation
--   gpu_compute_bound        a device event (kind kernel) that is not communication
--   gpu_communication_bound  a device event of kernel_class 'communication'
--   kernel_launch_overhead   launch call start to kernel start on an empty stream (kind launch)
--   kernel_kernel_overhead   gap between two kernels of a stream (kind kernel_kernel)
--   NULL                     a link that counts no time: dependency (between outermost ops),
--                            sync (device -> the call waiting for it), wait (stream -> stream)
-- Columns:
--   trace_id        INTEGER  trace
--   rank            INTEGER  rank (null when unknown)
--   step            BIGINT   N of the window's ProfilerStep#N (null: the whole trace)
--   window_uid      BIGINT   uid of the window's annotation (null: the whole trace)
--   seq             INTEGER  position along the path, from 0
--   kind            VARCHAR  cpu, dependency, kernel, kernel_kernel, launch, sync or wait
--   uid             BIGINT   event the time is spent in: the host call, the kernel (for
--                            kernel_kernel the one before the gap, for launch the one launched);
--                            null for the links that count no time
--   name            VARCHAR  that event's name
--   cat             VARCHAR  its category
--   device          BIGINT   device of a kernel, kernel_kernel or launch segment
--   stream          BIGINT   stream of that kernel
--   src_uid         BIGINT   event at the start of the segment (a host call, a kernel)
--   dst_uid         BIGINT   event at its end
--   ts_ns           BIGINT   ns, start of the segment
--   end_ns          BIGINT   ns, end of the segment
--   dur_ns          BIGINT   ns the path counts for it (0 for the links above and for the
--                            time inside a blocking call: cudaStreamSynchronize, cudaMemcpy, …)
--   bound_by        VARCHAR  see above
CREATE OR REPLACE VIEW critical_path AS
WITH loading AS (  -- the host calls inside a DataLoader annotation
    SELECT DISTINCT s.trace_id, s.uid
    FROM slices s JOIN slices l ON l.trace_id = s.trace_id AND l.pre <= s.pre AND s.pre <= l.subtree_end
    WHERE l.cat = 'user_annotation' AND l.name LIKE 'enumerate(DataLoader)#%'
)
SELECT c.trace_id, c.rank, c.step, c.window_uid, c.seq, c.kind, c.uid, coalesce(s.name, k.name) AS name,
       coalesce(s.cat, k.cat) AS cat, k.device, k.stream, c.src_uid, c.dst_uid, c.ts_ns, c.end_ns, c.weight_ns AS dur_ns,
       CASE c.kind WHEN 'cpu' THEN CASE WHEN d.uid IS NOT NULL THEN 'data_loading' ELSE 'cpu_bound' END
                   WHEN 'kernel' THEN CASE WHEN k.kernel_class = 'communication' THEN 'gpu_communication_bound'
                                           ELSE 'gpu_compute_bound' END
                   WHEN 'launch' THEN 'kernel_launch_overhead'
                   WHEN 'kernel_kernel' THEN 'kernel_kernel_overhead' END AS bound_by
FROM critical_path_edges c
LEFT JOIN slices s ON c.kind = 'cpu' AND s.trace_id = c.trace_id AND s.uid = c.uid
LEFT JOIN loading d ON c.kind = 'cpu' AND d.trace_id = c.trace_id AND d.uid = c.uid
LEFT JOIN kernels k ON c.kind IN ('kernel', 'kernel_kernel', 'launch') AND k.trace_id = c.trace_id AND k.uid = c.uid
ORDER BY c.trace_id, c.window_start_ns, c.window_uid, c.seq;
