//! The three components import exactly what the docs list, and export what a
//! host calls: the `server` world's component for rustpad-mcp's host
//! (docs/architecture.md), the `wasi:http/proxy` component for WebAssembly
//! hosts and the ACT plugin (docs/deployment.md). An import added by a dependency
//! or a refactoring fails here until the docs say so.

use std::fs;
use std::path::{Path, PathBuf};

use wasmparser::{Parser, Payload};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The top-level imports and exports of a component.
fn interface_of(path: &Path) -> (Vec<String>, Vec<String>) {
    let bytes = fs::read(path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}); run `make build` first",
            path.display()
        )
    });
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(&bytes) {
        match payload.expect("a valid component") {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(section) if depth == 0 => {
                for import in section {
                    let name = import.expect("an import").name.name;
                    // Interfaces are capabilities; the world's own record types
                    // (`reply`, `startup`, …) are imported as plain names.
                    if name.contains(':') {
                        imports.push(name.to_string());
                    }
                }
            }
            Payload::ComponentExportSection(section) if depth == 0 => {
                for export in section {
                    exports.push(export.expect("an export").name.name.to_string());
                }
            }
            _ => {}
        }
    }
    imports.sort();
    exports.sort();
    (imports, exports)
}

/// The lines of the fenced block that follows `marker` in a doc.
fn documented(doc: &str, marker: &str) -> Vec<String> {
    let text = fs::read_to_string(repo().join(doc)).expect("the doc");
    let after = text
        .split_once(marker)
        .unwrap_or_else(|| panic!("{doc} lacks {marker}"))
        .1;
    let block = after
        .split("```")
        .nth(1)
        .unwrap_or_else(|| panic!("no fenced block after {marker} in {doc}"));
    let mut lines: Vec<String> = block
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// The imports and exports of the component at `path`, after checking that
/// the imports are the list `doc` has after `marker`.
fn documented_interface_of(path: &Path, doc: &str, marker: &str) -> (Vec<String>, Vec<String>) {
    let (imports, exports) = interface_of(path);
    assert_eq!(
        imports,
        documented(doc, marker),
        "the imports of {} differ from {doc}",
        path.display()
    );
    (imports, exports)
}

#[test]
fn the_wasm_host_component_imports_only_the_documented_wasi_interfaces() {
    let path = std::env::var_os("RUSTPAD_MCP_HTTP_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/wasm/rustpad-mcp-http.wasm"));
    let (imports, exports) = documented_interface_of(
        &path,
        "docs/deployment.md",
        "<!-- imports of rustpad-mcp-http.wasm -->",
    );
    assert!(imports.iter().all(|name| name.starts_with("wasi:")));
    assert_eq!(exports, ["wasi:http/incoming-handler@0.2.12"]);
}

#[test]
fn the_server_world_component_keeps_its_imports() {
    let path = repo().join("target/wasm/rustpad-mcp.wasm");
    let (_, exports) = documented_interface_of(
        &path,
        "docs/architecture.md",
        "<!-- imports of the server world's component -->",
    );
    assert_eq!(exports, ["check", "configure", "handle", "watch"]);
}

#[test]
fn the_act_plugin_imports_only_the_documented_wasi_interfaces() {
    let path = repo().join("target/wasm/rustpad-mcp-act.wasm");
    let (imports, exports) = documented_interface_of(
        &path,
        "docs/deployment.md",
        "<!-- imports of rustpad-mcp-act.wasm -->",
    );
    // Besides WASI, only ACT's interfaces of types, which hold no functions.
    let not_wasi: Vec<&str> = imports
        .iter()
        .map(String::as_str)
        .filter(|name| !name.starts_with("wasi:"))
        .collect();
    assert_eq!(
        not_wasi,
        [
            "act:core/types@0.4.0",
            "act:sessions/types@0.2.0",
            "act:tools/types@0.2.0"
        ]
    );
    assert_eq!(
        exports,
        [
            "act:sessions/session-provider@0.2.0",
            "act:tools/tool-provider@0.2.0"
        ]
    );
}
