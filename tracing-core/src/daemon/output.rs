//! The output files of `write_into_file` sessions, which the core decides
//! and the daemon holds: a file the consumer passed with EnableTracing
//! (kept when the core adopts it), or an `output_path` created without
//! replacing an existing file; appended to, synced and closed as the core
//! asks, and reported back when a write or the last sync fails.

use std::fs::File;
use std::io::Write;

use super::Daemon;
use crate::platform::boottime_ns;
use crate::service::{ConsumerId, SessionId};

impl Daemon {
    /// Keeps the fd `consumer` passed with the EnableTracing call being
    /// handled as the output file of `session`, as the core said with
    /// [`Action::AdoptPassedOutput`](crate::service::Action::AdoptPassedOutput).
    pub(super) fn adopt_passed_output(&mut self, consumer: ConsumerId, session: SessionId) {
        if let Some((from, fd)) = self.passed_output.take()
            && from == consumer
        {
            self.files.insert(session, File::from(fd));
        }
    }

    /// Creates the `output_path` of a session; an existing file is never
    /// replaced (Perfetto's service creates it with `O_EXCL` too).
    pub(super) fn create_output(&mut self, session: SessionId, path: &str) {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o644);
        let result = match opts.open(path) {
            Ok(f) => {
                self.files.insert(session, f);
                Ok(())
            }
            Err(e) => {
                self.log(
                    1,
                    format_args!("session {session}: cannot create {path}: {e}"),
                );
                Err(e.to_string())
            }
        };
        self.svc.output_file_created(boottime_ns(), session, result);
    }

    /// Appends to a session's file; a failed write closes the file (what
    /// it holds stays) and the core stops the session.
    pub(super) fn write_output(&mut self, session: SessionId, data: &[u8], sync: bool) {
        let Some(f) = self.files.get_mut(&session) else {
            return;
        };
        let r = f
            .write_all(data)
            .and_then(|_| if sync { f.sync_data() } else { Ok(()) });
        if let Err(e) = r {
            eprintln!("zerotraced E: session {session}: write failed: {e}");
            self.files.remove(&session);
            self.svc
                .output_file_closed(boottime_ns(), session, Some(e.to_string()));
        }
    }

    /// Syncs and closes a session's file, as the core asked, and tells the
    /// core how that went: an error the kernel kept from an earlier write
    /// (a full or failing disk, a network file system) comes back here, at
    /// the last chance to tell the consumer.
    pub(super) fn close_output(&mut self, session: SessionId) {
        let error = self
            .files
            .remove(&session)
            .and_then(|f| finish_file(f).err())
            .map(|e| e.to_string());
        if let Some(e) = &error {
            eprintln!("zerotraced E: session {session}: closing the trace file failed: {e}");
        }
        self.svc.output_file_closed(boottime_ns(), session, error);
    }
}

/// Flushes `f`'s data to its device, then closes it. A file that cannot be
/// synced (a pipe, a terminal, `/dev/null`: `EINVAL`) has nothing held back
/// and is no error. `close(2)` itself reports nothing on Linux that the sync
/// did not (the descriptor is released either way), so the error seen is
/// the sync's.
fn finish_file(mut f: File) -> std::io::Result<()> {
    f.flush()?;
    match f.sync_data() {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
        other => other,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::io::Read;

    use super::*;

    /// A fresh file path under the temporary directory.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("zt-output-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("t")
    }

    /// A sync the kernel refuses for a real reason is the close's error
    /// (a descriptor opened for no I/O: `EBADF` from `fdatasync`, as a
    /// failing device's `EIO` would be), never swallowed.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "Miri does not support O_PATH opens; no unsafe code of ours here"
    )]
    fn a_failed_sync_is_the_closes_error() {
        let path = scratch("sync");
        std::fs::write(&path, b"x").unwrap();
        let fd = rustix::fs::open(
            &path,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let err = finish_file(File::from(fd)).unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(rustix::io::Errno::BADF.raw_os_error())
        );
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }

    /// A file that cannot be synced (a pipe) closes cleanly, with what was
    /// written delivered; a regular file is synced.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "kernel files and pipes only; no unsafe code of ours here"
    )]
    fn pipes_close_cleanly_and_files_are_synced() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut f = File::from(std::os::fd::OwnedFd::from(writer));
        f.write_all(b"trace").unwrap();
        finish_file(f).unwrap();
        let mut got = Vec::new();
        reader.read_to_end(&mut got).unwrap();
        assert_eq!(got, b"trace");

        let path = scratch("file");
        let mut f = File::create(&path).unwrap();
        f.write_all(b"trace").unwrap();
        finish_file(f).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"trace");
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
}
