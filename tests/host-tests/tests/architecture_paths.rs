//! Every file docs/architecture.md names exists, so its picture of the code
//! cannot outlive a move or a rename.
//!
//! - A path written from the repository's root (`host/…`, `guest/…`,
//!   `wit/…`, `tests/…`) must be there, file or folder; one under a folder
//!   the repository ignores (`/host/component/` in `.gitignore`: a build
//!   makes it) is left alone, and one with a placeholder (`tools/<name>.rs`)
//!   needs only the folder before it.
//! - A source file written from inside a tree (`http/post.rs`,
//!   `grants/websocket.rs`) must end the path of a file in one of the
//!   trees: the host's, the guest's, the rules crate's or the tests'.
//!
//! Run natively: `cargo test -p rustpad-mcp-host-tests --test architecture_paths`.

use std::fs;
use std::path::{Path, PathBuf};

/// Where a path written from the repository's root starts.
const FROM_THE_ROOT: [&str; 4] = ["host/", "guest/", "wit/", "tests/"];
/// The trees a source file written from inside one may be in.
const TREES: [&str; 4] = ["host/src", "guest/src", "guest/rules/src", "tests"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The words of `text` that look like paths, without the punctuation that
/// ends a sentence.
fn paths_in(text: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./<>-".contains(c);
    let mut paths: Vec<String> = text
        .split(|c: char| !is_path_char(c))
        .map(|word| word.trim_end_matches('.').to_string())
        .filter(|word| {
            FROM_THE_ROOT.iter().any(|root| word.starts_with(root))
                || (word.ends_with(".rs") && word.len() > ".rs".len())
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// The folders the repository ignores from its root (`/target`,
/// `/host/component/`), each ending in `/`.
fn ignored(root: &Path) -> Vec<String> {
    fs::read_to_string(root.join(".gitignore"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.strip_prefix('/'))
        .map(|folder| format!("{}/", folder.trim_end_matches('/')))
        .collect()
}

/// Every file below `dir`, as paths from `root` with `/` between names;
/// installed packages and build output are nobody's source.
fn files_below(root: &Path, dir: &Path, found: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "node_modules" | "target" | "__pycache__") {
                files_below(root, &path, found);
            }
        } else {
            let relative = path.strip_prefix(root).unwrap();
            found.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Whether `path`, as the page writes it, names something in the
/// repository at `root`: a path from the root is there (or in a folder a
/// build makes), a source path from inside a tree ends one of `sources`.
fn is_there(root: &Path, ignored: &[String], sources: &[String], path: &str) -> bool {
    if !FROM_THE_ROOT.iter().any(|start| path.starts_with(start)) {
        let ending = format!("/{path}");
        return sources.iter().any(|file| file.ends_with(&ending));
    }
    if ignored
        .iter()
        .any(|folder| path.starts_with(folder.as_str()))
    {
        return true;
    }
    // A placeholder stands for any name: its folder must be there.
    let written = match path.find('<') {
        Some(at) => &path[..path[..at].rfind('/').map_or(0, |slash| slash + 1)],
        None => path,
    };
    root.join(written).exists()
}

/// The paths `text` names that are not in the repository at `root`.
fn missing(root: &Path, text: &str) -> Vec<String> {
    let ignored = ignored(root);
    let mut sources = Vec::new();
    for tree in TREES {
        files_below(root, &root.join(tree), &mut sources);
    }
    paths_in(text)
        .into_iter()
        .filter(|path| !is_there(root, &ignored, &sources, path))
        .collect()
}

#[test]
fn every_path_the_architecture_names_exists() {
    let root = repository();
    let text = fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    assert!(
        paths_in(&text).len() > 40,
        "docs/architecture.md was read, and names the code's files"
    );
    let missing = missing(&root, &text);
    assert!(
        missing.is_empty(),
        "docs/architecture.md names files that do not exist:\n- {}",
        missing.join("\n- ")
    );
}

#[test]
fn the_check_tells_a_missing_file_from_one_that_is_there() {
    let root = repository();
    let text = "The gate (`host/src/transport/http/gate.rs`, or http/gate.rs) and \
                `host/src/main.rs`; the stdio transport (transport/stdio.rs). \
                A tool is `guest/src/tools/<name>.rs`; `host/component/` is built.";
    assert_eq!(
        missing(&root, text),
        ["host/src/transport/http/gate.rs", "http/gate.rs"]
    );
}
