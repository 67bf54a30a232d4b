//! What a stdio server keeps per user, beside nothing else: the seal key and
//! the ids it has spent, in the user's state directory.
//!
//! Some clients start a server for every tool call. A key random per process
//! would make every two-call token "not from this server", so on stdio the
//! key is created once per user and reused; the record of spent tokens and
//! question states lives beside it, so that one still works once across
//! processes. Both files are the user's alone (mode 0600 in a 0700
//! directory), and the key is published atomically without ever replacing
//! one another process wrote first.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::single_use::SpentIds;

/// The state directory's name under the platform's per-user state root.
const APP: &str = "rustpad-mcp";
const KEY_FILE: &str = "seal-key";
const SPENT_FILE: &str = "spent-ids";
/// Bytes of randomness in a key (written as hex).
const KEY_BYTES: usize = 32;
/// More live ids than any honest use produces; past it, spends fail closed.
pub const MAX_LIVE_IDS: usize = 100_000;

/// Where this user's state lives: `$XDG_STATE_HOME/rustpad-mcp`, else the
/// platform's place for it (`~/.local/state`, `~/Library/Application
/// Support`, `%LOCALAPPDATA%`). None when the environment names no home.
pub fn directory(lookup: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| lookup(name).filter(|value| !value.is_empty());
    if let Some(state) = set("XDG_STATE_HOME") {
        return Some(PathBuf::from(state).join(APP));
    }
    if cfg!(windows) {
        return set("LOCALAPPDATA").map(|local| PathBuf::from(local).join(APP));
    }
    let home = PathBuf::from(set("HOME")?);
    if cfg!(target_os = "macos") {
        Some(home.join("Library/Application Support").join(APP))
    } else {
        Some(home.join(".local/state").join(APP))
    }
}

/// Who holds the key that seals tokens and question states, as the
/// component is told (`RUSTPAD_SEAL_KEY_SCOPE`): it words its refusals by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// `RUSTPAD_SEAL_KEY`, set by the operator.
    Operator,
    /// Kept in the user's state directory, for every stdio process.
    User,
    /// Random, for this process only.
    Process,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Operator => "operator",
            Scope::User => "user",
            Scope::Process => "process",
        }
    }
}

/// The key a server signs with, where its spent ids are kept, and what to
/// tell the operator about it.
pub struct Seal {
    pub key: String,
    pub scope: Scope,
    pub spent: SpentIds,
    pub notice: Option<String>,
}

/// Chooses the key: the operator's; else, on stdio, the user's stored key
/// (made on first use); else a random one for this process.
pub fn seal(
    operator_key: Option<String>,
    serving_http: bool,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Seal, String> {
    if let Some(key) = operator_key.filter(|key| !key.trim().is_empty()) {
        return Ok(Seal {
            key,
            scope: Scope::Operator,
            spent: SpentIds::default(),
            notice: None,
        });
    }
    let mut notice = None;
    if !serving_http {
        let stored = match directory(lookup) {
            Some(dir) => seal_key(&dir).map(|key| (key, dir)),
            None => Err("no home directory is set (HOME, XDG_STATE_HOME or LOCALAPPDATA)".into()),
        };
        match stored {
            Ok((key, dir)) => {
                return Ok(Seal {
                    key,
                    scope: Scope::User,
                    spent: SpentIds::Shared(SpentFile::beside_key(&dir)),
                    notice: None,
                });
            }
            Err(problem) => {
                notice = Some(format!(
                    "rustpad-mcp: the seal key cannot be kept for this user ({problem}), so this process signs with a key of its own: a confirmation token then works only within this process. A client that starts a server for every call needs RUSTPAD_SEAL_KEY (32+ characters) in the server's environment."
                ));
            }
        }
    }
    let mut bytes = [0u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the seal key: {e}"))?;
    Ok(Seal {
        key: bytes.iter().map(|b| format!("{b:02x}")).collect(),
        scope: Scope::Process,
        spent: SpentIds::default(),
        notice,
    })
}

/// The user's key, created on first use. An error says why it cannot be
/// used, in words for the startup notice.
pub fn seal_key(directory: &Path) -> Result<String, String> {
    let path = directory.join(KEY_FILE);
    match read_key(&path) {
        Ok(Some(key)) => return Ok(key),
        Ok(None) => {}
        Err(problem) => return Err(problem),
    }
    create_private_directory(directory)?;
    let mut bytes = [0u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a key: {e}"))?;
    let key: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut file = tempfile::Builder::new()
        .prefix(".seal-key-")
        .tempfile_in(directory)
        .map_err(|e| format!("cannot write in {}: {e}", directory.display()))?;
    writeln!(file, "{key}")
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    match file.persist_noclobber(&path) {
        Ok(_) => Ok(key),
        // Another process published its key first: that one is the user's key.
        Err(error) if error.error.kind() == std::io::ErrorKind::AlreadyExists => {
            read_key(&path)?.ok_or_else(|| format!("{} vanished while it was read", path.display()))
        }
        Err(error) => Err(format!("cannot create {}: {}", path.display(), error.error)),
    }
}

/// The key in `path`; None when there is none yet.
fn read_key(path: &Path) -> Result<Option<String>, String> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot read {}: {error}", path.display())),
    };
    check_private(&file, path)?;
    let mut text = String::new();
    file.take(4096)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let key = text.trim();
    if key.len() < 2 * KEY_BYTES || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{} does not hold a key written by this server; remove it to have a new one made",
            path.display()
        ));
    }
    Ok(Some(key.to_string()))
}

/// Refuses a file that other users could read: a key they could read is
/// not the user's alone.
#[cfg(unix)]
fn check_private(file: &File, path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
    if metadata.mode() & 0o077 != 0 {
        return Err(format!(
            "{} can be read by other users; make it the owner's alone (chmod 600) or remove it",
            path.display()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_: &File, _: &Path) -> Result<(), String> {
    Ok(())
}

fn create_private_directory(directory: &Path) -> Result<(), String> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(directory)
        .map_err(|e| format!("cannot create {}: {e}", directory.display()))
}

/// The ids spent by every process of this user: one line `<expiry> <id>`
/// each, read and written under an exclusive lock on the file.
pub struct SpentFile {
    path: PathBuf,
}

impl SpentFile {
    /// The record beside the key in `directory`, which exists by now.
    pub fn beside_key(directory: &Path) -> SpentFile {
        SpentFile {
            path: directory.join(SPENT_FILE),
        }
    }

    /// True the first time `id` is spent within `ttl`, by any process of
    /// this user; false while it is spent, and false (closed) when the
    /// record cannot be read or written.
    pub fn spend(&self, id: &str, ttl: Duration) -> bool {
        self.try_spend(id, ttl).unwrap_or_else(|error| {
            eprintln!(
                "rustpad-mcp: cannot use {}: {error}; the approval is refused",
                self.path.display()
            );
            false
        })
    }

    fn try_spend(&self, id: &str, ttl: Duration) -> std::io::Result<bool> {
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&self.path)?;
        file.lock()?;
        let now = seconds(SystemTime::now());
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let live: Vec<(u64, &str)> = text
            .lines()
            .filter_map(|line| {
                let (expiry, spent) = line.split_once(' ')?;
                Some((expiry.parse().ok()?, spent))
            })
            .filter(|(expiry, _)| *expiry > now)
            .collect();
        if live.iter().any(|(_, spent)| *spent == id) || live.len() >= MAX_LIVE_IDS {
            return Ok(false);
        }
        let expiry = now + ttl.as_secs();
        // Expired lines are dropped whenever they are most of the file.
        if live.len() * 2 < text.lines().count() {
            let mut kept = String::new();
            for (at, spent) in &live {
                kept.push_str(&format!("{at} {spent}\n"));
            }
            kept.push_str(&format!("{expiry} {id}\n"));
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            file.write_all(kept.as_bytes())?;
        } else {
            file.seek(SeekFrom::End(0))?;
            file.write_all(format!("{expiry} {id}\n").as_bytes())?;
        }
        file.sync_data()?;
        Ok(true)
    }
}

fn seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rustpad-mcp-state-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_key_is_made_once_and_kept() {
        let dir = scratch("key");
        let first = seal_key(&dir).unwrap();
        assert_eq!(first.len(), 2 * KEY_BYTES);
        assert_eq!(seal_key(&dir).unwrap(), first);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&dir.join(KEY_FILE)), 0o600);
            assert_eq!(mode(&dir), 0o700);
            fs::set_permissions(dir.join(KEY_FILE), fs::Permissions::from_mode(0o644)).unwrap();
            assert!(seal_key(&dir).unwrap_err().contains("chmod 600"));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_id_is_spent_once_across_readers_of_the_file() {
        let dir = scratch("spent");
        create_private_directory(&dir).unwrap();
        let (one, other) = (SpentFile::beside_key(&dir), SpentFile::beside_key(&dir));
        let minute = Duration::from_secs(60);
        assert!(one.spend("a", minute));
        assert!(!other.spend("a", minute));
        assert!(other.spend("b", Duration::ZERO));
        assert!(one.spend("b", minute));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_directory_follows_the_platform() {
        let lookup = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            directory(lookup(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")])),
            Some(PathBuf::from("/s/rustpad-mcp"))
        );
        if cfg!(all(unix, not(target_os = "macos"))) {
            assert_eq!(
                directory(lookup(&[("HOME", "/h")])),
                Some(PathBuf::from("/h/.local/state/rustpad-mcp"))
            );
        }
        assert_eq!(directory(lookup(&[])), None);
    }
}
