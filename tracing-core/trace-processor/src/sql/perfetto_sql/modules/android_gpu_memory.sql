-- android.gpu.memory, written for zerotrace: the GPU memory each process
-- held over time, from its `GPU Memory` process counter track.

INCLUDE PERFETTO MODULE linux.memory.general;

-- One row per sample of a process's GPU memory, lasting until its next.
CREATE PERFETTO TABLE android_gpu_memory_per_process(
  -- Start.
  ts TIMESTAMP,
  -- Duration.
  dur DURATION,
  -- The process.
  upid JOINID(process.id),
  -- GPU memory held, in bytes.
  gpu_memory LONG
)
AS
SELECT ts, dur, upid, cast_int!(value) AS gpu_memory
FROM _all_counters_per_process
WHERE name = 'GPU Memory';
