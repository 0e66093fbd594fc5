//! Who may be a consumer of this service. The consumer socket is the one
//! place the kernel decides that: a user connects to a socket file only if
//! the file's owner, group and mode (and search permission on every
//! directory above it) let that user write to it. Any other endpoint that
//! opens consumer connections on a peer's behalf (the WebSocket bridge,
//! through the daemon's door) must lend that peer no more: it asks
//! [`may_connect`] with the uid the kernel vouches for, and refuses the peer
//! when the socket would have.
//!
//! The judgement is the kernel's discretionary access check, made with the
//! user's groups as the user database lists them (`getgrouplist`): root
//! passes; otherwise the owner's bits if the uid owns the file, the group's
//! bits if one of the uid's groups owns it, the others' bits else. An
//! abstract socket has no file and no permissions (anyone in the network
//! namespace connects); a TCP or vsock consumer socket lets in anyone who
//! reaches it. The check is made afresh for each peer, so a `chmod` or
//! `chgrp` of the socket takes effect at once.

use std::path::{Path, PathBuf};

use crate::ipc::socket::Endpoint;

/// Why a uid may not be a consumer through an endpoint other than the
/// consumer socket: what the endpoint tells the peer, with what to do.
#[derive(Debug, thiserror::Error)]
pub enum AccessRefusal {
    /// The uid could not connect to the consumer socket itself.
    #[error(
        "uid {uid} may not connect to the consumer socket {}: {why}. The bridge lends no \
         more than the socket would; to let a group trace, give the socket that group and \
         mode 660 (zerotraced --set-socket-permissions, as Perfetto's traced)",
        path.display()
    )]
    NotPermitted {
        /// The peer's uid.
        uid: u32,
        /// The consumer socket.
        path: PathBuf,
        /// Which permission is missing.
        why: String,
    },
    /// The consumer socket's file (or a directory above it) cannot be
    /// examined, so nobody is let in.
    #[error("the consumer socket {} cannot be examined: {err}", path.display())]
    Unexaminable {
        /// The file or directory that failed.
        path: PathBuf,
        /// Why.
        err: std::io::Error,
    },
    /// The kernel names no local user for the peer (another machine, or a
    /// connection it no longer lists).
    #[error(
        "the kernel does not vouch for this peer's uid (not a local process on loopback), \
         and such peers are not admitted; connect from this machine, or start the bridge \
         with --insecure-websocket-admit-unvouched-peers to let any peer that reaches it \
         record and read traces"
    )]
    Unvouched,
}

/// The user database's view of a uid: its primary group and every group it
/// is a member of. `None` for a uid the database does not know (it then
/// belongs to no group).
pub(crate) fn groups_of(uid: u32) -> Option<Vec<u32>> {
    #[cfg(target_os = "linux")]
    {
        unix_groups::groups_of(uid)
    }
    // Elsewhere (macOS spells getgrouplist with signed ids) no group is
    // known: the check then grants by owner and others only, never more.
    #[cfg(not(target_os = "linux"))]
    {
        let _ = uid;
        None
    }
}

/// The id of the group named `name` in the user database (for
/// `--set-socket-permissions`); a number is taken as it is.
pub fn group_id(name: &str) -> Option<u32> {
    if let Ok(n) = name.parse() {
        return Some(n);
    }
    #[cfg(unix)]
    {
        unix_groups::group_id(name)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Whether a peer of `uid` could connect to the consumer
/// socket `endpoint` (see the module doc).
pub fn may_connect(endpoint: &Endpoint, uid: u32) -> Result<(), AccessRefusal> {
    match endpoint {
        Endpoint::Path(path) => {
            let groups = groups_of(uid).unwrap_or_default();
            may_connect_path(path, uid, &groups)
        }
        // No file, no permissions: anyone that can reach it connects.
        Endpoint::Abstract(_) | Endpoint::Tcp(_) | Endpoint::Vsock { .. } => Ok(()),
    }
}

/// The kernel's check for a unix socket file: write permission on the
/// file, search permission on each directory above it.
pub(crate) fn may_connect_path(path: &Path, uid: u32, groups: &[u32]) -> Result<(), AccessRefusal> {
    // Root passes every discretionary check.
    if uid == 0 {
        return Ok(());
    }
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|err| AccessRefusal::Unexaminable {
                path: path.to_path_buf(),
                err,
            })?
            .join(path)
    };
    let mut dirs: Vec<&Path> = absolute.ancestors().skip(1).collect();
    dirs.reverse();
    for dir in dirs {
        let perm = perm_of(dir)?;
        if !perm.grants(uid, groups, EXEC) {
            return Err(AccessRefusal::NotPermitted {
                uid,
                path: path.to_path_buf(),
                why: format!("no search permission on {} ({perm})", dir.display()),
            });
        }
    }
    let perm = perm_of(&absolute)?;
    if !perm.grants(uid, groups, WRITE) {
        return Err(AccessRefusal::NotPermitted {
            uid,
            path: path.to_path_buf(),
            why: format!("no write permission on the socket ({perm})"),
        });
    }
    Ok(())
}

const WRITE: u32 = 0o2;
const EXEC: u32 = 0o1;

/// A file's owner, group and permission bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Perm {
    /// The owner's uid.
    pub uid: u32,
    /// The owning group.
    pub gid: u32,
    /// The permission bits (`0o777` part of the mode).
    pub mode: u32,
}

impl Perm {
    /// Whether `uid` in `groups` has `bit` (`0o1` search, `0o2` write,
    /// `0o4` read) as the kernel decides it: the owner's class if the uid
    /// owns the file, else the group's if a group of the uid owns it, else
    /// the others' (a class that matches but lacks the bit is final, as in
    /// the kernel).
    pub fn grants(&self, uid: u32, groups: &[u32], bit: u32) -> bool {
        if uid == 0 {
            return true;
        }
        let class = if uid == self.uid {
            self.mode >> 6
        } else if groups.contains(&self.gid) {
            self.mode >> 3
        } else {
            self.mode
        };
        class & bit != 0
    }
}

impl std::fmt::Display for Perm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "owner uid {}, group gid {}, mode {:03o}",
            self.uid, self.gid, self.mode
        )
    }
}

#[cfg(unix)]
fn perm_of(path: &Path) -> Result<Perm, AccessRefusal> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).map_err(|err| AccessRefusal::Unexaminable {
        path: path.to_path_buf(),
        err,
    })?;
    Ok(Perm {
        uid: m.uid(),
        gid: m.gid(),
        mode: m.mode() & 0o777,
    })
}

#[cfg(not(unix))]
fn perm_of(path: &Path) -> Result<Perm, AccessRefusal> {
    Err(AccessRefusal::Unexaminable {
        path: path.to_path_buf(),
        err: std::io::Error::from(std::io::ErrorKind::Unsupported),
    })
}

#[cfg(unix)]
mod unix_groups {
    #[cfg(target_os = "linux")]
    use std::ffi::CStr;

    /// `getgrnam_r`'s gid for `name`.
    pub(super) fn group_id(name: &str) -> Option<u32> {
        let name = std::ffi::CString::new(name).ok()?;
        let mut buf = vec![0u8; 4096];
        loop {
            let mut gr = std::mem::MaybeUninit::<libc::group>::uninit();
            let mut result: *mut libc::group = std::ptr::null_mut();
            // SAFETY: every pointer is to a live local of the right type;
            // `buf` is writable for `buf.len()` bytes.
            let rc = unsafe {
                libc::getgrnam_r(
                    name.as_ptr(),
                    gr.as_mut_ptr(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    &mut result,
                )
            };
            if rc == libc::ERANGE && buf.len() < (1 << 20) {
                buf.resize(buf.len() * 2, 0);
                continue;
            }
            if rc != 0 || result.is_null() {
                return None;
            }
            // SAFETY: getgrnam_r returned 0 with a non-null result: `gr`
            // is filled.
            return Some(unsafe { gr.assume_init() }.gr_gid);
        }
    }

    /// `getpwuid_r` for the name and primary group, then `getgrouplist`.
    #[cfg(target_os = "linux")]
    pub(super) fn groups_of(uid: u32) -> Option<Vec<u32>> {
        let mut buf = vec![0u8; 4096];
        let (name, primary) = loop {
            let mut pw = std::mem::MaybeUninit::<libc::passwd>::uninit();
            let mut result: *mut libc::passwd = std::ptr::null_mut();
            // SAFETY: every pointer is to a live local of the right type;
            // `buf` is writable for `buf.len()` bytes. On success the
            // strings in `pw` point into `buf`, which outlives their use.
            let rc = unsafe {
                libc::getpwuid_r(
                    uid,
                    pw.as_mut_ptr(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    &mut result,
                )
            };
            if rc == libc::ERANGE && buf.len() < (1 << 20) {
                buf.resize(buf.len() * 2, 0);
                continue;
            }
            if rc != 0 || result.is_null() {
                return None;
            }
            // SAFETY: getpwuid_r returned 0 with a non-null result, so it
            // filled `pw`, and `pw_name` is a NUL-terminated string in `buf`.
            let (name, gid) = unsafe {
                let pw = pw.assume_init();
                (CStr::from_ptr(pw.pw_name).to_owned(), pw.pw_gid)
            };
            break (name, gid);
        };
        let mut groups: Vec<libc::gid_t> = vec![0; 64];
        loop {
            let mut n = groups.len() as libc::c_int;
            // SAFETY: `name` is NUL-terminated; `groups` is writable for `n`
            // entries, and getgrouplist writes at most `n` and sets `n`.
            let rc =
                unsafe { libc::getgrouplist(name.as_ptr(), primary, groups.as_mut_ptr(), &mut n) };
            if rc >= 0 {
                groups.truncate(n.max(0) as usize);
                return Some(groups);
            }
            // Too small: `n` says how many there are.
            let want = (n.max(0) as usize).max(groups.len() * 2);
            if want > 1 << 16 {
                return Some(vec![primary]);
            }
            groups.resize(want, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: u32 = 1000;
    const BOB: u32 = 1001;
    const TRACERS: u32 = 2000;

    fn sock(mode: u32) -> Perm {
        Perm {
            uid: 0,
            gid: TRACERS,
            mode,
        }
    }

    #[test]
    fn classes_are_chosen_before_bits() {
        // Owner-only: nobody else writes.
        assert!(!sock(0o600).grants(ALICE, &[ALICE], WRITE));
        assert!(sock(0o600).grants(0, &[], WRITE));
        // A group's members, and only they.
        assert!(sock(0o660).grants(ALICE, &[ALICE, TRACERS], WRITE));
        assert!(!sock(0o660).grants(BOB, &[BOB], WRITE));
        // Everyone.
        assert!(sock(0o666).grants(BOB, &[BOB], WRITE));
        // A matching class without the bit is final, even if the others'
        // class has it (the kernel does not fall through).
        assert!(!sock(0o606).grants(ALICE, &[TRACERS], WRITE));
        let owned = Perm {
            uid: ALICE,
            gid: TRACERS,
            mode: 0o066,
        };
        assert!(!owned.grants(ALICE, &[TRACERS], WRITE));
    }

    #[test]
    fn abstract_and_network_sockets_let_anyone_in() {
        for ep in [
            Endpoint::Abstract("x".into()),
            Endpoint::Tcp("127.0.0.1:1".into()),
            Endpoint::Vsock { cid: 2, port: 1 },
        ] {
            assert!(may_connect(&ep, 12345).is_ok(), "{ep:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    #[cfg_attr(miri, ignore = "binds a unix socket")]
    fn a_real_socket_file_and_its_directories_decide() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("zt-access-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("consumer");
        let _l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let me = crate::platform::current_uid();
        let other = if me == 0 { 54321 } else { 0 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(may_connect_path(&path, me, &[]).is_ok());
        if other != 0 {
            // Not root ourselves: root passes, and that is all we can say.
            assert!(may_connect_path(&path, 0, &[]).is_ok());
        } else {
            let e = may_connect_path(&path, 54321, &[]).unwrap_err();
            assert!(e.to_string().contains("no write permission"), "{e}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
            assert!(may_connect_path(&path, 54321, &[]).is_ok());
            // A directory above it without search permission for others.
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            let e = may_connect_path(&path, 54321, &[]).unwrap_err();
            assert!(e.to_string().contains("no search permission"), "{e}");
        }
        let gone = dir.join("absent");
        assert!(matches!(
            may_connect_path(&gone, 54321, &[]),
            Err(AccessRefusal::Unexaminable { .. }) | Err(AccessRefusal::NotPermitted { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(target_os = "linux")]
    #[test]
    #[cfg_attr(miri, ignore = "calls the C library's user database")]
    fn root_is_in_its_own_group() {
        let g = groups_of(0).expect("root is in the user database");
        assert!(g.contains(&0), "{g:?}");
        assert!(groups_of(0xfff0_0000).is_none());
    }
}
