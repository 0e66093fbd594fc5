//! `__intrinsic_android_network_packets`: the details of each network
//! packet event the Android network trace importer made a slice of
//! (`parser/android_network_packets.rs`), which the
//! `android.network_packets` module joins to the slices.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_android_network_packets`: one packet, or one
    /// aggregate of packets, and its slice.
    pub struct AndroidNetworkPacketRow in "__intrinsic_android_network_packets"
        sorted by slice_id {
        /// The event's slice.
        slice_id: u32,
        /// The network interface (`wlan0`, `rmnet0`, ...).
        iface: StrId,
        /// `Transmitted`, `Received` or `DIR_UNKNOWN`.
        direction: StrId,
        /// The transport (`IPPROTO_TCP`, `IPPROTO_UDP`, ...).
        packet_transport: StrId,
        /// Bytes, on the wire.
        packet_length: i64,
        /// Packets.
        packet_count: i64,
        /// The socket's Android traffic tag.
        socket_tag: i64,
        /// The tag in hex (`0x…`).
        socket_tag_str: StrId,
        /// The socket's uid.
        socket_uid: i64,
        /// The local port (TCP and UDP).
        local_port: Option<i64>,
        /// The remote port (TCP and UDP).
        remote_port: Option<i64>,
        /// The ICMP type.
        packet_icmp_type: Option<i64>,
        /// The ICMP code.
        packet_icmp_code: Option<i64>,
        /// The TCP flags bitmask.
        packet_tcp_flags: Option<i64>,
        /// The TCP flags as letters (`fsrpauec`, `.` where unset).
        packet_tcp_flags_str: StrId,
    }
}

/// The table's declaration.
pub const TABLES: &[super::TableDecl] = &[AndroidNetworkPacketRow::TABLE];
