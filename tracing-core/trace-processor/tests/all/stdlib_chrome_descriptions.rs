//! The standard library's Chrome description tables
//! (`chrome.event_latency_description`,
//! `chrome.scroll_jank.scroll_jank_cause_map`): every stage a jank cause
//! names is a described EventLatency stage, and the joined view keeps
//! every stage.

use zerotrace_trace_processor::TraceProcessor;

use crate::common;
use common::{i, packet, rows, s, trace};

#[test]
fn every_jank_cause_names_a_described_stage() {
    let tp = TraceProcessor::from_bytes(&trace(&[packet(|p| {
        p.set_timestamp(1);
    })]))
    .expect("trace");
    assert_eq!(
        rows(
            &tp,
            "INCLUDE PERFETTO MODULE chrome.scroll_jank.scroll_jank_cause_map;
             SELECT
               (SELECT count(*) FROM chrome_event_latency_stage_descriptions),
               (SELECT count(DISTINCT name) FROM chrome_event_latency_stage_descriptions),
               (SELECT count(*) FROM chrome_scroll_jank_cause_descriptions
                WHERE event_latency_stage NOT IN
                  (SELECT name FROM chrome_event_latency_stage_descriptions)),
               (SELECT count(*) FROM chrome_event_latency_stage_descriptions
                WHERE description IS NULL OR description = '')",
        ),
        vec![vec![i(38), i(38), i(0), i(0)]]
    );
    // A stage with three possible causes is three rows of the view, one
    // with none is one row with NULL causes.
    assert_eq!(
        rows(
            &tp,
            "SELECT name, count(*), count(cause_thread)
             FROM chrome_scroll_jank_causes_with_event_latencies
             WHERE name IN ('SwapEndToPresentationCompositorFrame', 'Commit')
             GROUP BY name ORDER BY name",
        ),
        vec![
            vec![s("Commit"), i(1), i(0)],
            vec![s("SwapEndToPresentationCompositorFrame"), i(3), i(3)],
        ]
    );
}
