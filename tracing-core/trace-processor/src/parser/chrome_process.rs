//! What Chrome says of its processes in their track descriptors, as
//! upstream records it: the process type (`ChromeProcessDescriptor`, or
//! the older `ProcessDescriptor.chrome_process_type`) names the process
//! when nothing better did (a renderer's label wins over the descriptor's
//! name) and, from a `ChromeProcessDescriptor`, becomes the process's
//! `chrome.process_type` arg, NULL for an unspecified type, which is how
//! the Chrome metrics tell Chrome's processes in a system trace; the
//! hosting app's package and the crash id become
//! `chrome.host_app_package_name` and `chrome.crash_trace_id`.

use zerotrace_protos::protos::{ChromeProcessDescriptorDecoder, ProcessDescriptorDecoder};

use super::Parser;
use super::process_tree::add_process_arg;
use crate::column_store::strings::StrId;
use crate::storage::args::ArgValue;
use crate::tracker::process::NamePriority;

/// `PROCESS_RENDERER`.
const RENDERER: i32 = 2;
/// `PROCESS_RENDERER_EXTENSION`.
const RENDERER_EXTENSION: i32 = 40;

/// The label upstream gives Chrome process type `t` (`None`: unspecified).
fn type_name(t: i32) -> Option<&'static str> {
    Some(match t {
        0 => return None,
        1 => "Browser",
        2 => "Renderer",
        3 => "Utility",
        4 => "SandboxHelper",
        5 => "PROCESS_SANDBOX_HELPER",
        6 => "Gpu",
        7 => "PpapiPlugin",
        8 => "PpapiBroker",
        9 => "Service: network.mojom.NetworkService",
        10 => "Service: tracing.mojom.TracingService",
        11 => "Service: storage.mojom.StorageService",
        12 => "Service: audio.mojom.AudioService",
        13 => "Service: data_decoder.mojom.DataDecoderService",
        14 => "Service: chrome.mojom.UtilWin",
        15 => "Service: proxy_resolver.mojom.ProxyResolverFactory",
        16 => "Service: media.mojom.CdmServiceBroker",
        17 => "Service: video_capture.mojom.VideoCaptureService",
        18 => "Service: unzip.mojom.Unzipper",
        19 => "Service: mirroring.mojom.MirroringService",
        20 => "Service: patch.mojom.FilePatcher",
        21 => "Service: chromeos.tts.mojom.TtsService",
        22 => "Service: printing.mojom.PrintingService",
        23 => "Service: quarantine.mojom.Quarantine",
        24 => "Service: chromeos.local_search_service.mojom.LocalSearchService",
        25 => "Service: chromeos.assistant.mojom.AssistantAudioDecoderFactory",
        26 => "Service: chrome.mojom.FileUtilService",
        27 => "Service: printing.mojom.PrintCompositor",
        28 => "Service: paint_preview.mojom.PaintPreviewCompositorCollection",
        29 => "Service: media.mojom.SpeechRecognitionService",
        30 => "Service: device.mojom.XRDeviceService",
        31 => "Service: chrome.mojom.UtilReadIcon",
        32 => "Service: language_detection.mojom.LanguageDetectionService",
        33 => "Service: sharing.mojom.Sharing",
        34 => "Service: chrome.mojom.MediaParserFactory",
        35 => "Service: qrcode_generator.mojom.QRCodeService",
        36 => "Service: chrome.mojom.ProfileImport",
        37 => "Service: chromeos.ime.mojom.ImeService",
        38 => "Service: recording.mojom.RecordingService",
        39 => "Service: shape_detection.mojom.ShapeDetectionService",
        40 => "Extension Renderer",
        41 => "Service: media.mojom.MediaFoundationServiceBroker",
        42 => "PROCESS_RENDERER_TOP_WEBUI",
        _ => "PBZERO_UNKNOWN_ENUM_VALUE",
    })
}

/// Names process `upid` after Chrome process type `t`; returns the label.
fn label(p: &mut Parser, upid: u32, t: i32) -> StrId {
    let Some(name) = type_name(t) else {
        return StrId::NULL;
    };
    let id = p.storage.strings.intern(name);
    // A label names a process nobody named; a renderer's (which tells
    // renderers apart from the browser) wins over the descriptor's name.
    let priority = if t == RENDERER || t == RENDERER_EXTENSION {
        NamePriority::TrackDescriptor
    } else {
        NamePriority::Other
    };
    p.processes
        .set_process_name(&mut p.storage, upid, id, priority);
    id
}

/// The older `ProcessDescriptor.chrome_process_type` of process `upid`.
pub(super) fn legacy_type(p: &mut Parser, upid: u32, process: &ProcessDescriptorDecoder<'_>) {
    if let Some(t) = process.chrome_process_type_raw() {
        label(p, upid, t);
    }
}

/// A track descriptor's `ChromeProcessDescriptor` for process `upid`.
pub(super) fn descriptor(p: &mut Parser, upid: u32, chrome: &ChromeProcessDescriptorDecoder<'_>) {
    let id = label(p, upid, chrome.process_type().unwrap_or(0));
    add_process_arg(p, upid, "chrome.process_type", ArgValue::String(id));
    if let Some(app) = chrome.host_app_package_name() {
        let app = p.storage.strings.intern(app);
        add_process_arg(
            p,
            upid,
            "chrome.host_app_package_name",
            ArgValue::String(app),
        );
    }
    if let Some(crash) = chrome.crash_trace_id() {
        add_process_arg(p, upid, "chrome.crash_trace_id", ArgValue::Uint(crash));
    }
}
