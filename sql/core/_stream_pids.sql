-- _stream_pids: the pid the device events of each stream sit on.
-- Answers: under which process (pid) does a trace viewer draw the tracks of a device stream?
-- depends: kernels
-- The smallest int pid and the smallest string pid (events.pid_str, for traces that name their
-- processes) of the stream's device events; one of them is usually null.
-- Columns (one per trace, device and stream):
--   trace_id  INTEGER  trace
--   device    BIGINT   device id
--   stream    BIGINT   stream id
--   pid       BIGINT   int pid of the stream's device events (null when they have a string pid)
--   pid_str   VARCHAR  string pid of the stream's device events (null when they have an int pid)
CREATE OR REPLACE VIEW _stream_pids AS
SELECT k.trace_id, k.device, k.stream, min(e.pid) AS pid, min(e.pid_str) AS pid_str
FROM kernels k JOIN events e ON e.trace_id = k.trace_id AND e.uid = k.uid
GROUP BY k.trace_id, k.device, k.stream;
