//! `packages_list` (TracePacket field 47) and `user_list` (123): the
//! device's installed packages into `package_list` (the first entry of
//! each package name; the list's read and parse errors as upstream's
//! stats) and its users into `__intrinsic_android_user_list` (one row per
//! user id, its type the last one read; a negative error code counted).

use protozero::Decoder;

use super::Parser;
use super::importer::{Importer, Input};
use crate::tables::android::{AndroidUserListRow, PackageListRow};

/// TracePacket.packages_list.
const PACKAGES_LIST: u32 = 47;
/// TracePacket.user_list.
const USER_LIST: u32 = 123;

/// The payloads this module imports.
pub const IMPORTERS: &[(u32, Importer)] =
    &[(PACKAGES_LIST, import_packages), (USER_LIST, import_users)];

/// What the importer keeps between packets.
#[derive(Debug, Default)]
pub struct PackagesState {
    /// The package names already in the table.
    seen: crate::hash::HashSet<String>,
    /// Each user's row, by user id.
    users: crate::hash::HashMap<i64, usize>,
}

fn fields(bytes: &[u8]) -> impl Iterator<Item = protozero::Field<'_>> {
    Decoder::new(bytes).map_while(Result::ok)
}

fn import_packages(p: &mut Parser, input: &Input<'_>) {
    let (mut read_error, mut parse_error) = (false, false);
    for f in fields(input.bytes) {
        match f.id {
            1 => {
                if let Ok(info) = f.as_bytes() {
                    package(p, info);
                }
            }
            2 => parse_error = f.as_bool().unwrap_or(false),
            3 => read_error = f.as_bool().unwrap_or(false),
            _ => {}
        }
    }
    p.storage
        .stats
        .set("packages_list_has_read_errors", i64::from(read_error));
    p.storage
        .stats
        .set("packages_list_has_parse_errors", i64::from(parse_error));
}

fn package(p: &mut Parser, info: &[u8]) {
    let mut name = "";
    let mut row = PackageListRow::default();
    for f in fields(info) {
        match f.id {
            1 => name = f.as_str().unwrap_or(""),
            2 => row.uid = f.as_u64().map(|v| v as i64).unwrap_or(0),
            3 => row.debuggable = i64::from(f.as_bool().unwrap_or(false)),
            4 => row.profileable_from_shell = i64::from(f.as_bool().unwrap_or(false)),
            5 => row.version_code = f.as_i64().unwrap_or(0),
            _ => {}
        }
    }
    if !p.packages.seen.insert(name.to_owned()) {
        return;
    }
    row.package_name = p.storage.strings.intern(name);
    p.storage.android.packages.push(row);
}

fn import_users(p: &mut Parser, input: &Input<'_>) {
    for f in fields(input.bytes) {
        match f.id {
            1 => {
                let Ok(info) = f.as_bytes() else { continue };
                let (mut kind, mut uid) = ("", 0i64);
                for g in fields(info) {
                    match g.id {
                        1 => kind = g.as_str().unwrap_or(""),
                        2 => uid = i64::from(g.as_i32().unwrap_or(0)),
                        _ => {}
                    }
                }
                let user_type = p.storage.strings.intern(kind);
                match p.packages.users.get(&uid) {
                    Some(&at) => {
                        if let Some(row) = p.storage.android.users.get_mut(at) {
                            row.user_type = user_type;
                        }
                    }
                    None => {
                        p.packages.users.insert(uid, p.storage.android.users.len());
                        p.storage.android.users.push(AndroidUserListRow {
                            user_type,
                            android_user_id: uid,
                        });
                    }
                }
            }
            2 if f.as_i32().unwrap_or(0) < 0 => p.storage.stats.incr("user_list_errors"),
            _ => {}
        }
    }
}
