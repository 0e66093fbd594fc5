//! The switches a load takes before its first byte, as
//! `trace_processor_shell`'s load flags set them: counting the packets'
//! bytes by field path (`--analyze-trace-proto-content`) and dropping the
//! TrackEvents before the trace's range of interest
//! (`--crop-track-events`).

use super::Loader;
use crate::load_options::LoadOptions;

impl Loader {
    /// Counts every packet's bytes by field path into
    /// `experimental_proto_path` and `experimental_proto_content`, as
    /// upstream's `--analyze-trace-proto-content` does (off by default).
    pub fn analyze_proto_content(&mut self) {
        self.proto_content = Some(Box::default());
    }

    /// Drops the TrackEvents before the trace's range of interest
    /// (`parser/range_of_interest.rs`), as upstream's
    /// `--crop-track-events` does (off by default).
    pub fn crop_track_events(&mut self) {
        self.parser.track_event.crop.enabled = true;
    }

    /// Sets the switches `options` turn on.
    pub fn apply_load_flags(&mut self, options: &LoadOptions) {
        if options.analyze_proto_content {
            self.analyze_proto_content();
        }
        if options.crop_track_events {
            self.crop_track_events();
        }
    }
}
