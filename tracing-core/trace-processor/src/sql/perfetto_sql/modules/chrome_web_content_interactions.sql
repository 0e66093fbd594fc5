-- Written for zerotrace: the `chrome.web_content_interactions` module.
-- `chrome_web_content_interactions`: Chrome's discrete interactions with
-- a page's content (taps, clicks, key presses, drags): the `Web
-- Interaction` slices on renderer process tracks, with the interaction's
-- type (the typed `web_content_interaction.type` field) and the renderer.

INCLUDE PERFETTO MODULE slices.with_context;

CREATE PERFETTO TABLE chrome_web_content_interactions(
  id LONG,
  ts TIMESTAMP,
  dur DURATION,
  interaction_type STRING,
  renderer_upid LONG
)
AS
SELECT
  id,
  ts,
  dur,
  extract_arg(arg_set_id, 'web_content_interaction.type') AS interaction_type,
  upid AS renderer_upid
FROM process_slice
WHERE name = 'Web Interaction';
