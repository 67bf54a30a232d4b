//! The shape of the code, checked: no two modules of one parent import each
//! other (directly or round a longer circle), and no product file grows past
//! what one person holds in their head without saying why at its top, in
//! the tests as in the product.
//!
//! It reads the sources of the component (`guest/src`), the shared rules
//! (`guest/rules/src`) and the host (`host/src`) as text: a module's
//! dependencies are the `crate::…` and `super::…` paths in its code (comments
//! and its `#[cfg(test)] mod tests` left out). A child using its parent's
//! items, or a parent its children's, is the tree itself and no circle.
//!
//! The length check also reads the tests' own code (`tests/`, `guest/tests`:
//! Rust, Python, JavaScript, shell), where the reason goes in the first lines.
//!
//! Run natively: `cargo test -p guest --test structure`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Lines past which a file must say at its top why it is long.
const LONG_FILE_LINES: usize = 500;
/// The words a long file's opening comment uses to say why.
const WHY_LONG: &str = "Why this file is long:";

/// The source trees checked, from the repository root.
const TREES: [&str; 3] = ["guest/src", "guest/rules/src", "host/src"];

type ModulePath = Vec<String>;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files below `directory` whose extension is one of `extensions`, in
/// name order; installed packages and build output are nobody's code here.
fn files_with(directory: &Path, extensions: &[&str], found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(directory)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", directory.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "node_modules" | "target" | "__pycache__") {
                files_with(&path, extensions, found);
            }
        } else if path
            .extension()
            .is_some_and(|e| extensions.contains(&e.to_string_lossy().as_ref()))
        {
            found.push(path);
        }
    }
}

/// `a/b.rs` is `a::b`, `a/mod.rs` is `a`, and `lib.rs` or `main.rs` the crate.
fn module_of(root: &Path, file: &Path) -> ModulePath {
    let relative = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: ModulePath = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod")) {
        parts.pop();
    }
    if parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main") {
        parts.clear();
    }
    parts
}

/// The code of a file: comments removed, and its test module cut off.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path the code names from `crate` or `super`, as its segments
/// (`crate::a::{b, c::d}` gives `crate a b` and `crate a c d`).
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let starts = (at == 0 || !is_ident(chars[at - 1]))
            && ["crate::", "super::"]
                .iter()
                .any(|head| chars[at..].starts_with(&head.chars().collect::<Vec<_>>()));
        if starts {
            let (found, end) = read_path(&chars, at, Vec::new());
            paths.extend(found);
            at = end;
        } else {
            at += 1;
        }
    }
    paths
}

/// Reads the path starting at `at` (and any `{…}` group in it), after `prefix`.
fn read_path(chars: &[char], mut at: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut segments = prefix;
    loop {
        let start = at;
        while at < chars.len() && is_ident(chars[at]) {
            at += 1;
        }
        if at > start {
            segments.push(chars[start..at].iter().collect());
        }
        if chars[at..].starts_with(&[':', ':']) {
            at += 2;
            if chars.get(at) == Some(&'{') {
                return read_group(chars, at + 1, segments);
            }
            continue;
        }
        return (vec![segments], at);
    }
}

fn read_group(chars: &[char], mut at: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut paths = Vec::new();
    loop {
        while at < chars.len() && (chars[at].is_whitespace() || chars[at] == ',') {
            at += 1;
        }
        match chars.get(at) {
            None => return (paths, at),
            Some('}') => return (paths, at + 1),
            Some(_) => {
                let (found, end) = read_path(chars, at, prefix.clone());
                paths.extend(found);
                // Skip `as name` and anything else up to the next item.
                at = end.max(at + 1);
                while at < chars.len() && !matches!(chars[at], ',' | '}') {
                    at += 1;
                }
            }
        }
    }
}

/// The module a path names: the longest prefix of it that is a module.
fn target_of(
    from: &ModulePath,
    path: &[String],
    modules: &BTreeSet<ModulePath>,
) -> Option<ModulePath> {
    let mut base: ModulePath = Vec::new();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => rest = &rest[1..],
        Some("super") => {
            base = from.clone();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    let mut target = base;
    for segment in rest {
        let mut longer = target.clone();
        longer.push(segment.clone());
        if modules.contains(&longer) {
            target = longer;
        } else {
            break;
        }
    }
    Some(target)
}

/// For an import from `from` of `to`: the two children of their nearest
/// common parent that it links, unless one module contains the other.
fn sibling_edge(from: &ModulePath, to: &ModulePath) -> Option<(ModulePath, String, String)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common == from.len() || common == to.len() {
        return None;
    }
    Some((
        from[..common].to_vec(),
        from[common].clone(),
        to[common].clone(),
    ))
}

/// The groups of one parent's children that import each other round a
/// circle (the strongly connected components of more than one module, or
/// one that imports itself), each sorted.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reaches = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(node) = stack.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|node| (node, reaches(node))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (node, reached) in &reach {
        if !reached.contains(*node) {
            continue;
        }
        let group: Vec<String> = reached
            .iter()
            .filter(|other| reach.get(other).is_some_and(|back| back.contains(*node)))
            .cloned()
            .collect();
        groups.insert(group);
    }
    groups.into_iter().collect()
}

struct Tree {
    files: Vec<(PathBuf, ModulePath, String)>,
    modules: BTreeSet<ModulePath>,
}

fn read_tree(name: &str) -> Tree {
    let root = repository().join(name);
    let mut paths = Vec::new();
    files_with(&root, &["rs"], &mut paths);
    let files: Vec<(PathBuf, ModulePath, String)> = paths
        .into_iter()
        .map(|path| {
            let module = module_of(&root, &path);
            let text = fs::read_to_string(&path).unwrap();
            (path, module, text)
        })
        .collect();
    let modules = files.iter().map(|(_, module, _)| module.clone()).collect();
    Tree { files, modules }
}

/// The circles in a tree, each with the imports that make it.
fn circles_in(tree: &Tree) -> Vec<String> {
    let mut graphs: BTreeMap<ModulePath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (_, module, text) in &tree.files {
        for path in paths_in(&code_of(text)) {
            let Some(target) = target_of(module, &path, &tree.modules) else {
                continue;
            };
            if let Some((parent, from, to)) = sibling_edge(module, &target) {
                graphs
                    .entry(parent)
                    .or_default()
                    .entry(from)
                    .or_default()
                    .insert(to);
            }
        }
    }
    let mut problems = Vec::new();
    for (parent, edges) in &graphs {
        for group in circles(edges) {
            let parent = if parent.is_empty() {
                "crate".to_string()
            } else {
                parent.join("::")
            };
            let imports: Vec<String> = group
                .iter()
                .flat_map(|from| {
                    edges[from]
                        .iter()
                        .filter(|to| group.contains(to))
                        .map(move |to| format!("{from} → {to}"))
                })
                .collect();
            problems.push(format!(
                "in {parent}, {} import each other: {}",
                group.join(", "),
                imports.join(", ")
            ));
        }
    }
    problems
}

#[test]
fn no_two_modules_of_one_parent_import_each_other() {
    let mut problems = Vec::new();
    for name in TREES {
        for circle in circles_in(&read_tree(name)) {
            problems.push(format!("{name}: {circle}"));
        }
    }
    assert!(
        problems.is_empty(),
        "import circles (each module should only use modules below it):\n- {}",
        problems.join("\n- ")
    );
}

/// Why `text` (at `path`) is a problem: it is long and `opening`, the part
/// of it where the reason belongs, does not give one.
fn unexplained_length(path: &Path, text: &str, opening: Vec<&str>, place: &str) -> Option<String> {
    let lines = text.lines().count();
    (lines > LONG_FILE_LINES && !opening.join("\n").contains(WHY_LONG)).then(|| {
        format!(
            "{} has {lines} lines and {place} does not say \"{WHY_LONG} …\"",
            path.strip_prefix(repository()).unwrap_or(path).display()
        )
    })
}

#[test]
fn a_long_file_says_why_at_its_top() {
    let mut problems = Vec::new();
    for name in TREES {
        for (path, _, text) in read_tree(name).files {
            let opening = text.lines().take_while(|line| line.starts_with("//!"));
            problems.extend(unexplained_length(
                &path,
                &text,
                opening.collect(),
                "its opening comment",
            ));
        }
    }
    assert!(problems.is_empty(), "- {}", problems.join("\n- "));
}

/// The tests' own code (Rust, Python, JavaScript, shell), which a maintainer
/// reads as much as the product's.
const TEST_TREES: [&str; 2] = ["tests", "guest/tests"];
const TEST_SOURCES: [&str; 4] = ["rs", "py", "mjs", "sh"];
/// How far down a test file's opening comment (or docstring) may say why.
const OPENING_LINES: usize = 40;

#[test]
fn a_long_test_file_says_why_at_its_top() {
    let mut problems = Vec::new();
    for name in TEST_TREES {
        let mut files = Vec::new();
        files_with(&repository().join(name), &TEST_SOURCES, &mut files);
        for path in files {
            let text = fs::read_to_string(&path).unwrap();
            let opening = text.lines().take(OPENING_LINES).collect();
            let place = format!("its first {OPENING_LINES} lines");
            problems.extend(unexplained_length(&path, &text, opening, &place));
        }
    }
    assert!(problems.is_empty(), "- {}", problems.join("\n- "));
}

#[test]
fn the_checker_sees_circles_and_groups() {
    let code = code_of(
        "use crate::a::{b, c::{d, e as f}};\n// use crate::hidden;\nfn x() { super::g::h(); }\n#[cfg(test)]\nmod tests { use crate::z; }\n",
    );
    let paths = paths_in(&code);
    let shown: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        shown,
        [
            "crate::a::b",
            "crate::a::c::d",
            "crate::a::c::e",
            "super::g::h"
        ]
    );
    let modules: BTreeSet<ModulePath> = [vec![], vec!["a".into()], vec!["a".into(), "c".into()]]
        .into_iter()
        .collect();
    let from: ModulePath = vec!["q".into()];
    assert_eq!(
        target_of(&from, &paths[1], &modules),
        Some(vec!["a".to_string(), "c".to_string()])
    );
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in [("x", "y"), ("y", "z"), ("z", "x"), ("p", "x")] {
        edges.entry(a.into()).or_default().insert(b.into());
    }
    assert_eq!(circles(&edges), vec![vec!["x", "y", "z"]]);
    edges.entry("q".into()).or_default().insert("q".into());
    assert_eq!(circles(&edges).len(), 2);
}

/// Every front end runs a tool through the one typed call
/// (`mcp::run_tool`): the ACT plugin writes and reads no JSON-RPC text, and
/// the MCP dispatch finds a call's pad through the typed outcome, not by
/// reading its result back.
#[test]
fn front_ends_run_tools_through_the_typed_call() {
    let root = repository();
    let mut act = Vec::new();
    files_with(&root.join("guest/src/act"), &["rs"], &mut act);
    assert!(!act.is_empty(), "the ACT plugin's sources were not found");
    for file in &act {
        let code = code_of(&fs::read_to_string(file).unwrap());
        for jsonrpc in [
            "\"jsonrpc\"",
            "handle_with",
            "\"tools/call\"",
            "\"tools/list\"",
        ] {
            assert!(
                !code.contains(jsonrpc),
                "{} speaks JSON-RPC to the dispatch ({jsonrpc})",
                file.display()
            );
        }
        if file.ends_with("act/mod.rs") {
            assert!(
                code.contains("run_tool("),
                "the ACT plugin runs no typed call"
            );
        }
    }
    let mcp = fs::read_to_string(root.join("guest/src/mcp/methods.rs")).unwrap();
    assert!(!code_of(&mcp).contains("/structuredContent/"));
}
