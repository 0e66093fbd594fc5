-- chrome.scroll_jank.scroll_jank_cause_map, written for zerotrace: which
-- process and thread to look at when a given EventLatency stage made a
-- scroll janky, with a hint in our own words, and that map joined to the
-- stage descriptions.
--   chrome_scroll_jank_cause_descriptions
--       (event_latency_stage, cause_process, cause_thread, cause_description)
--   chrome_scroll_jank_causes_with_event_latencies
--       (name, description, cause_process, cause_thread, cause_description)

INCLUDE PERFETTO MODULE chrome.event_latency_description;

-- One row per (stage, process, thread) that can be behind a janky stage.
CREATE PERFETTO TABLE chrome_scroll_jank_cause_descriptions(
  event_latency_stage STRING,
  cause_process STRING,
  cause_thread STRING,
  cause_description STRING
) AS
SELECT
  column1 AS event_latency_stage,
  column2 AS cause_process,
  column3 AS cause_thread,
  column4 AS cause_description
FROM (VALUES
  ('GenerationToBrowserMain', 'Browser', 'CrBrowserMain',
   'The browser main thread was busy (it matches an InputLatency::TouchMove). Look at the tasks it ran, at ScopedBlockingCall slices on thread-pool workers and at the network service; navigations, slow BeginMainFrames and Java Choreographer delays are frequent reasons.'),
  ('RendererCompositorQueueingDelay', 'Renderer', 'Compositor',
   'The compositor could not answer the BeginFrame because it was waiting for the renderer main thread (touch targeting, script handlers) after the scroll had started.'),
  ('RendererCompositorQueueingDelay', 'GPU', 'VizCompositorThread',
   'The BeginFrame was late. Check for a fling before or during the scroll: a fling is one input whose effect merges many inputs into one frame.'),
  ('ReceiveCompositorFrameToStartDraw', 'GPU', 'VizCompositorThread',
   'The display compositor held the frame. Check which BeginFrame task ended inside this EventLatency; the system may also be holding the buffer.'),
  ('ReceiveCompositorFrameToStartDraw', 'GPU', 'CrGpuMain',
   'A busy GPU main thread did not release the buffer; its slices show why. If it was idle, the system held the buffer.'),
  ('ReceiveCompositorFrameToStartDraw', 'Browser', 'CrBrowserMain',
   'Other browser main-thread tasks may have blocked the toolbar.'),
  ('BufferReadyToLatch', 'GPU', 'VizCompositorThread',
   'Usually scheduling: the buffer missed the once-per-vsync latch and had to wait a whole interval. Compare the time up to BufferReadyToLatch with the previous EventLatency: longer now points at the system, shorter at Chrome (the previous frame was quick, or the GPU was late).'),
  ('SwapEndToPresentationCompositorFrame', 'GPU', 'VizCompositorThread',
   'Often the same missed latch as in BufferReadyToLatch; compare the time up to that stage with the previous EventLatency to tell a system delay from a Chrome one.'),
  ('SwapEndToPresentationCompositorFrame', 'GPU', 'CrGpuMain',
   'If StartDrawToBufferAvailable also appears in this EventLatency, the GPU main thread may have been busy or descheduled; surfaceflinger, when traced, is worth checking too.'),
  ('SwapEndToPresentationCompositorFrame', 'GPU', 'surfaceflinger',
   'If StartDrawToBufferAvailable also appears in this EventLatency, the display compositor never got the signal from surfaceflinger that it may write the buffer.')
);

-- Every EventLatency stage with its description and, when the map has
-- them, each process and thread that may cause jank in it (NULL otherwise).
CREATE PERFETTO VIEW chrome_scroll_jank_causes_with_event_latencies(
  name STRING,
  description STRING,
  cause_process STRING,
  cause_thread STRING,
  cause_description STRING
) AS
SELECT
  stage.name,
  stage.description,
  cause.cause_process,
  cause.cause_thread,
  cause.cause_description
FROM chrome_event_latency_stage_descriptions AS stage
LEFT JOIN chrome_scroll_jank_cause_descriptions AS cause
  ON cause.event_latency_stage = stage.name;
