//! What a stdio server keeps per user: the seal key, in the user's state
//! directory.
//!
//! Some clients start a server for every tool call. A key random per process
//! would make every two-call token "not from this server", so on stdio the
//! key is created once per user and reused (an approval still works once:
//! the pad's history shows its first use, whichever process made it).
//!
//! The key decides which approvals verify, so nothing found there is taken
//! on trust: the directory must be the user's own and private (0700), the
//! key file a regular file of the user's own, private (0600), read through
//! the directory it was checked in and never through a symbolic link. Any
//! other finding is refused with a notice naming the path, and the process
//! signs with a key of its own. A new key is published atomically, never
//! replacing one another process wrote first.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The state directory's name under the platform's per-user state root.
const APP: &str = "rustpad-mcp";
const KEY_FILE: &str = "seal-key";
/// Bytes of randomness in a key (written as hex).
const KEY_BYTES: usize = 32;
/// More than a key file written by this server holds.
const MAX_KEY_FILE_BYTES: usize = 4096;

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

/// The key a server signs with, and what to tell the operator about it.
pub struct Seal {
    pub key: String,
    pub scope: Scope,
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
            notice: None,
        });
    }
    let mut notice = None;
    if !serving_http {
        let stored = match directory(lookup) {
            Some(dir) => seal_key(&dir),
            None => Err("no home directory is set (HOME, XDG_STATE_HOME or LOCALAPPDATA)".into()),
        };
        match stored {
            Ok(key) => {
                return Ok(Seal {
                    key,
                    scope: Scope::User,
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
    Ok(Seal {
        key: random_key()?,
        scope: Scope::Process,
        notice,
    })
}

fn random_key() -> Result<String, String> {
    let mut bytes = [0u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for a key: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The user's key, created on first use. An error says why it cannot be
/// used, in words for the startup notice.
pub fn seal_key(directory: &Path) -> Result<String, String> {
    create_private_directory(directory)?;
    let checked = private::Directory::open(directory)?;
    if let Some(key) = checked.read_key(KEY_FILE)? {
        return Ok(key);
    }
    let mut file = tempfile::Builder::new()
        .prefix(".seal-key-")
        .tempfile_in(directory)
        .map_err(|e| format!("cannot write in {}: {e}", directory.display()))?;
    writeln!(file, "{}", random_key()?)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| format!("cannot write {}: {e}", directory.join(KEY_FILE).display()))?;
    match file.persist_noclobber(directory.join(KEY_FILE)) {
        Ok(_) => {}
        // Another process published its key first: that one is the user's key.
        Err(error) if error.error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => {
            return Err(format!(
                "cannot create {}: {}",
                directory.join(KEY_FILE).display(),
                error.error
            ));
        }
    }
    // Whatever was published, the key in use is the one read through the
    // directory that was checked.
    checked.read_key(KEY_FILE)?.ok_or_else(|| {
        format!(
            "{} vanished while it was read",
            directory.join(KEY_FILE).display()
        )
    })
}

/// What a key file must hold: the hex this server writes.
fn key_in(text: &str, path: &Path) -> Result<String, String> {
    let key = text.trim();
    if key.len() < 2 * KEY_BYTES || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{} does not hold a key written by this server; remove it to have a new one made",
            path.display()
        ));
    }
    Ok(key.to_string())
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

#[cfg(unix)]
mod private {
    //! The checks, with the descriptors they were made on.

    use std::io::Read;
    use std::os::fd::OwnedFd;
    use std::path::{Path, PathBuf};

    use rustix::fs::{FileType, Mode, OFlags, fstat, open, openat};
    use rustix::io::Errno;

    use super::{MAX_KEY_FILE_BYTES, key_in};

    /// A directory checked to be the user's own and private.
    pub struct Directory {
        fd: OwnedFd,
        path: PathBuf,
    }

    impl Directory {
        pub fn open(path: &Path) -> Result<Directory, String> {
            let fd = open(
                path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|errno| match errno {
                Errno::LOOP | Errno::NOTDIR => format!(
                    "{} is not a directory of its own (a symbolic link or a file); remove it to have a new one made",
                    path.display()
                ),
                errno => format!("cannot open {}: {errno}", path.display()),
            })?;
            owned_and_private(&fd, path, FileType::Directory, "chmod 700")?;
            Ok(Directory {
                fd,
                path: path.to_path_buf(),
            })
        }

        /// The key in `name`; None when there is none yet.
        pub fn read_key(&self, name: &str) -> Result<Option<String>, String> {
            let path = self.path.join(name);
            // Non-blocking, so that a FIFO put in its place cannot hold the
            // open; it is then refused as not a regular file.
            let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
            let fd = match openat(&self.fd, name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::LOOP) => {
                    return Err(format!(
                        "{} is a symbolic link; remove it to have a new key made",
                        path.display()
                    ));
                }
                Err(errno) => return Err(format!("cannot read {}: {errno}", path.display())),
            };
            owned_and_private(&fd, &path, FileType::RegularFile, "chmod 600")?;
            let mut text = String::new();
            std::fs::File::from(fd)
                .take(MAX_KEY_FILE_BYTES as u64)
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            key_in(&text, &path).map(Some)
        }
    }

    /// Refuses what another user owns or could read or change, and anything
    /// but `kind`.
    fn owned_and_private(
        fd: &OwnedFd,
        path: &Path,
        kind: FileType,
        fix: &str,
    ) -> Result<(), String> {
        let stat = fstat(fd).map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
        if FileType::from_raw_mode(stat.st_mode) != kind {
            let what = if kind == FileType::Directory {
                "a directory"
            } else {
                "a regular file"
            };
            return Err(format!(
                "{} is not {what}; remove it to have a new one made",
                path.display()
            ));
        }
        if stat.st_uid != rustix::process::geteuid().as_raw() {
            return Err(format!(
                "{} belongs to another user; remove it to have a new one made",
                path.display()
            ));
        }
        if stat.st_mode & 0o077 != 0 {
            return Err(format!(
                "{} can be read or changed by other users; make it the owner's alone ({fix}) or remove it",
                path.display()
            ));
        }
        Ok(())
    }
}

#[cfg(not(unix))]
mod private {
    //! Elsewhere the platform's per-user directory is trusted as it is.

    use std::path::{Path, PathBuf};

    use super::{MAX_KEY_FILE_BYTES, key_in};

    pub struct Directory(PathBuf);

    impl Directory {
        pub fn open(path: &Path) -> Result<Directory, String> {
            Ok(Directory(path.to_path_buf()))
        }

        pub fn read_key(&self, name: &str) -> Result<Option<String>, String> {
            let path = self.0.join(name);
            match std::fs::read(&path) {
                Ok(bytes) if bytes.len() <= MAX_KEY_FILE_BYTES => {
                    key_in(&String::from_utf8_lossy(&bytes), &path).map(Some)
                }
                Ok(_) => key_in("", &path).map(Some),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(error) => Err(format!("cannot read {}: {error}", path.display())),
            }
        }
    }
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

    #[cfg(unix)]
    #[test]
    fn links_fifos_and_open_directories_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("refused");
        seal_key(&dir).unwrap();
        // A key file that is a link to another file.
        let elsewhere = scratch("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        fs::rename(dir.join(KEY_FILE), elsewhere.join("planted")).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("planted"), dir.join(KEY_FILE)).unwrap();
        assert!(seal_key(&dir).unwrap_err().contains("symbolic link"));
        fs::remove_file(dir.join(KEY_FILE)).unwrap();
        // A FIFO: refused at once, not waited on.
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join(KEY_FILE))
            .status()
            .unwrap();
        assert!(made.success());
        fs::set_permissions(dir.join(KEY_FILE), fs::Permissions::from_mode(0o600)).unwrap();
        assert!(seal_key(&dir).unwrap_err().contains("not a regular file"));
        fs::remove_file(dir.join(KEY_FILE)).unwrap();
        // A directory others may write in.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(seal_key(&dir).unwrap_err().contains("chmod 700"));
        fs::remove_dir_all(&dir).unwrap();
        // The state directory itself a link.
        std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
        assert!(
            seal_key(&dir)
                .unwrap_err()
                .contains("not a directory of its own")
        );
        fs::remove_file(&dir).unwrap();
        fs::remove_dir_all(&elsewhere).unwrap();
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
