//! `prost` structs for the subset of Perfetto's TracePacket the benchmark
//! writes; they serve both as encoder (c, d) and as the decoding oracle.
//! Oneofs of the real schema are flattened to optional fields (same wire form).

/// The packet: timestamp, sequence flags, a track event, or a bytes field.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Field 8.
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// Field 11.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TraceEvent>,
    /// Field 13.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Field 50 (a large bytes field).
    #[prost(bytes = "vec", optional, tag = "50")]
    pub compressed_packets: Option<Vec<u8>>,
}

/// TrackEvent.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TraceEvent {
    /// Field 3 (proto2 repeated scalar: unpacked).
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    /// Field 4.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// Field 9 (enum Type).
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// Field 10.
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    /// Field 11.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
}

/// DebugAnnotation with an interned name and an int or string value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// Field 1.
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    /// Field 4.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// Field 6.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
}
