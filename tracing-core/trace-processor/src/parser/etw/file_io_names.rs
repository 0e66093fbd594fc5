//! The names ETW's file I/O events show: each event type by its opcode
//! (Microsoft's `FileIo` event class) and each information class by its
//! value (the kernel's `FILE_INFORMATION_CLASS`), as upstream names them.

/// The first opcode of [`EVENT_TYPES`].
pub const FIRST_OPCODE: u32 = 64;

/// Event type names from opcode 64; None for the opcodes upstream leaves
/// unnamed (a NULL name).
pub const EVENT_TYPES: [Option<&str>; 23] = [
    Some("CreateFile"),
    Some("Cleanup"),
    Some("Close"),
    Some("ReadFile"),
    Some("WriteFile"),
    Some("SetInformation"),
    Some("DeleteFile"),
    Some("RenameFile"),
    Some("DirectoryEnumeration"),
    Some("Flush"),
    Some("QueryFileInformation"),
    Some("FilesystemControlEvent"),
    Some("EndOperation"),
    Some("DirectoryNotification"),
    None,
    Some("DeletePath"),
    Some("RenamePath"),
    None,
    None,
    Some("FltRead"),
    // Upstream's name has this leading space.
    Some(" FltWrite"),
    Some("FltSetInfo"),
    Some("FltQueryInfo"),
];

/// The `CreateFile` opcode.
pub const CREATE_FILE: u32 = 64;
/// The `EndOperation` opcode.
pub const END_OPERATION: u32 = 76;

/// An opcode's name: None when the opcode is out of the table, Some(None)
/// when the table leaves it unnamed.
pub fn event_type(opcode: u32) -> Option<Option<&'static str>> {
    let idx = opcode.checked_sub(FIRST_OPCODE)?;
    EVENT_TYPES.get(idx as usize).copied()
}

/// An information class's name, if known.
pub fn info_class(value: u64) -> Option<&'static str> {
    let idx = value.checked_sub(1)?;
    INFO_CLASSES.get(usize::try_from(idx).ok()?).copied()
}

/// The information class whose extra info is a disposition.
pub const FILE_DISPOSITION_INFORMATION: u64 = 13;
/// The information classes whose extra info is a file size.
pub const FILE_SIZE_INFORMATION: [u64; 2] = [19, 20];

/// `FILE_INFORMATION_CLASS` names, from 1.
pub const INFO_CLASSES: [&str; 81] = [
    "FileDirectoryInformation",
    "FileFullDirectoryInformation",
    "FileBothDirectoryInformation",
    "FileBasicInformation",
    "FileStandardInformation",
    "FileInternalInformation",
    "FileEaInformation",
    "FileAccessInformation",
    "FileNameInformation",
    "FileRenameInformation",
    "FileLinkInformation",
    "FileNamesInformation",
    "FileDispositionInformation",
    "FilePositionInformation",
    "FileFullEaInformation",
    "FileModeInformation",
    "FileAlignmentInformation",
    "FileAllInformation",
    "FileAllocationInformation",
    "FileEndOfFileInformation",
    "FileAlternateNameInformation",
    "FileStreamInformation",
    "FilePipeInformation",
    "FilePipeLocalInformation",
    "FilePipeRemoteInformation",
    "FileMailslotQueryInformation",
    "FileMailslotSetInformation",
    "FileCompressionInformation",
    "FileObjectIdInformation",
    "FileCompletionInformation",
    "FileMoveClusterInformation",
    "FileQuotaInformation",
    "FileReparsePointInformation",
    "FileNetworkOpenInformation",
    "FileAttributeTagInformation",
    "FileTrackingInformation",
    "FileIdBothDirectoryInformation",
    "FileIdFullDirectoryInformation",
    "FileValidDataLengthInformation",
    "FileShortNameInformation",
    "FileIoCompletionNotificationInformation",
    "FileIoStatusBlockRangeInformation",
    "FileIoPriorityHintInformation",
    "FileSfioReserveInformation",
    "FileSfioVolumeInformation",
    "FileHardLinkInformation",
    "FileProcessIdsUsingFileInformation",
    "FileNormalizedNameInformation",
    "FileNetworkPhysicalNameInformation",
    "FileIdGlobalTxDirectoryInformation",
    "FileIsRemoteDeviceInformation",
    "FileUnusedInformation",
    "FileNumaNodeInformation",
    "FileStandardLinkInformation",
    "FileRemoteProtocolInformation",
    "FileRenameInformationBypassAccessCheck",
    "FileLinkInformationBypassAccessCheck",
    "FileVolumeNameInformation",
    "FileIdInformation",
    "FileIdExtdDirectoryInformation",
    "FileReplaceCompletionInformation",
    "FileHardLinkFullIdInformation",
    "FileIdExtdBothDirectoryInformation",
    "FileDispositionInformationEx",
    "FileRenameInformationEx",
    "FileRenameInformationExBypassAccessCheck",
    "FileDesiredStorageClassInformation",
    "FileStatInformation",
    "FileMemoryPartitionInformation",
    "FileStatLxInformation",
    "FileCaseSensitiveInformation",
    "FileLinkInformationEx",
    "FileLinkInformationExBypassAccessCheck",
    "FileStorageReserveIdInformation",
    "FileCaseSensitiveInformationForceAccessCheck",
    "FileKnownFolderInformation",
    "FileStatBasicInformation",
    "FileId64ExtdDirectoryInformation",
    "FileId64ExtdBothDirectoryInformation",
    "FileIdAllExtdDirectoryInformation",
    "FileIdAllExtdBothDirectoryInformation",
];
