-- Written for zerotrace: the `std.gpu.context` module. It provides
-- `gpu_context`, one row per graphics context the GPU render stages
-- named (the context's handle, the process it belongs to and the API it
-- speaks), read from the table the render stage importer fills.

CREATE PERFETTO VIEW gpu_context(
  -- The row's id.
  id ID,
  -- The context's handle (a GL context, a VkDevice, a CUDA context...).
  context_id LONG,
  -- The process that owns the context.
  pid LONG,
  -- The context's API: OPEN_GL, VULKAN, OPEN_CL, CUDA, HIP or UNDEFINED.
  api STRING
) AS
SELECT id, context_id, pid, api
FROM __intrinsic_gpu_context;
