//! Which tools a server offers: RUSTPAD_ALLOW_TOOLS and RUSTPAD_DENY_TOOLS
//! (names, `prefix*` patterns, the `essential` preset) and RUSTPAD_READ_ONLY.

use super::ALL;
use super::catalogue::from_name;
use super::tool::Tool;

/// Destructive tools newer than the rest: an operator whose deny list was
/// written before they existed has not decided about them, so startup says
/// they are offered.
static NEWER_DESTRUCTIVE: [&Tool; 1] = [&super::edit_document::TOOL];

/// One entry of RUSTPAD_ALLOW_TOOLS / RUSTPAD_DENY_TOOLS.
enum Entry {
    Essential,
    Exact(&'static Tool),
    Prefix(String),
}

impl Entry {
    fn matches(&self) -> Vec<&'static Tool> {
        match self {
            Entry::Essential => ALL.iter().copied().filter(|t| t.essential).collect(),
            Entry::Exact(tool) => vec![*tool],
            Entry::Prefix(prefix) => ALL
                .iter()
                .copied()
                .filter(|tool| tool.name.starts_with(prefix.as_str()))
                .collect(),
        }
    }
}

/// Shows an entry in an error only if it looks like a tool name.
fn show_entry(entry: &str) -> String {
    let plain = entry.len() <= 64
        && entry
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '*');
    if plain {
        format!("\"{entry}\"")
    } else {
        format!("an entry of {} characters", entry.chars().count())
    }
}

fn parse_list(variable: &str, raw: Option<&str>) -> Result<Option<Vec<(String, Entry)>>, String> {
    let entries: Vec<String> = raw
        .unwrap_or("")
        .split(',')
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty())
        .collect();
    if entries.is_empty() {
        return Ok(None);
    }
    let all_names = || {
        let mut names: Vec<&str> = ALL.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.join(", ")
    };
    let mut parsed = Vec::new();
    for text in entries {
        let entry = if text == "essential" {
            Entry::Essential
        } else if let Some(prefix) = text.strip_suffix('*').filter(|p| !p.contains('*')) {
            Entry::Prefix(prefix.to_string())
        } else if text.contains('*') {
            return Err(format!(
                "rustpad-mcp: {variable}: {} is not a valid entry; a pattern is the start of a tool name followed by a single \"*\" (e.g. get_*)",
                show_entry(&text)
            ));
        } else {
            match from_name(&text) {
                Some(tool) => Entry::Exact(tool),
                None => return Err(unknown_entry(variable, &text, &all_names())),
            }
        };
        if entry.matches().is_empty() {
            return Err(unknown_entry(variable, &text, &all_names()));
        }
        parsed.push((text, entry));
    }
    Ok(Some(parsed))
}

fn unknown_entry(variable: &str, text: &str, names: &str) -> String {
    format!(
        "rustpad-mcp: {variable}: no tool matches {}. The tools are: {names}; \"essential\" selects the curated five.",
        show_entry(text)
    )
}

/// Chooses the tools a server offers from the allow and deny lists.
pub fn select(
    allow: Option<&str>,
    deny: Option<&str>,
    read_only: bool,
    notices: &mut Vec<String>,
) -> Result<Vec<&'static Tool>, String> {
    let offered = |tool: &&Tool| !read_only || tool.is_read();
    let mut chosen: Vec<&'static Tool> = match parse_list("RUSTPAD_ALLOW_TOOLS", allow)? {
        None => ALL.to_vec(),
        Some(entries) => {
            let mut chosen = Vec::new();
            for (text, entry) in entries {
                let matches = entry.matches();
                if read_only && !matches.iter().any(offered) {
                    if let Entry::Exact(tool) = entry {
                        return Err(format!(
                            "rustpad-mcp: RUSTPAD_ALLOW_TOOLS names {}, a write tool, but RUSTPAD_READ_ONLY is on and offers only read tools; remove one of the two",
                            tool.name
                        ));
                    }
                    notices.push(format!(
                        "rustpad-mcp: RUSTPAD_ALLOW_TOOLS entry {} matches only write tools, which RUSTPAD_READ_ONLY turns off; it adds nothing",
                        show_entry(&text)
                    ));
                }
                chosen.extend(matches);
            }
            chosen
        }
    };
    let without_read_only = !chosen.is_empty();
    chosen.retain(offered);
    if let Some(entries) = parse_list("RUSTPAD_DENY_TOOLS", deny)? {
        for (_, entry) in entries {
            let denied = entry.matches();
            chosen.retain(|tool| !denied.contains(tool));
        }
    }
    let selected: Vec<&'static Tool> = ALL.iter().copied().filter(|t| chosen.contains(t)).collect();
    if deny.is_some_and(|d| !d.trim().is_empty()) {
        notices.extend(
            NEWER_DESTRUCTIVE
                .iter()
                .filter(|newer| selected.contains(newer))
                .map(|newer| {
                    let name = newer.name;
                    format!(
                        "rustpad-mcp: RUSTPAD_DENY_TOOLS does not mention {name}, a destructive tool new in this version (see CHANGELOG.md), so it is offered; add {name} to RUSTPAD_DENY_TOOLS if this server should not offer it"
                    )
                }),
        );
    }
    if selected.is_empty() {
        let cause = if read_only && without_read_only {
            " (RUSTPAD_READ_ONLY leaves only the read tools)"
        } else {
            ""
        };
        return Err(format!(
            "rustpad-mcp: RUSTPAD_ALLOW_TOOLS / RUSTPAD_DENY_TOOLS would start with an empty tool list{cause}; refusing to start a server that can do nothing"
        ));
    }
    Ok(selected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &[&'static Tool]) -> Vec<&'static str> {
        tools.iter().map(|t| t.name).collect()
    }

    /// The tools that say they only read: the four real ones, and in these
    /// tests `count_lines`, which is offered read-only because its
    /// annotations say so.
    const READS: [&str; 6] = [
        "get_document",
        "get_document_info",
        "get_stats",
        "get_changes",
        "wait_for_changes",
        "count_lines",
    ];

    fn pick(
        allow: Option<&str>,
        deny: Option<&str>,
        read_only: bool,
    ) -> Result<Vec<&'static str>, String> {
        select(allow, deny, read_only, &mut Vec::new()).map(|t| names(&t))
    }

    /// Startup is refused with a message that says each of `says`.
    fn refused(allow: Option<&str>, deny: Option<&str>, read_only: bool, says: &[&str]) {
        let err = pick(allow, deny, read_only).unwrap_err();
        for part in says {
            assert!(err.contains(part), "{part:?} in {err}");
        }
    }

    #[test]
    fn a_deny_list_that_predates_a_destructive_tool_is_told_about_it() {
        let mut notices = Vec::new();
        let tools = select(None, Some("set_document"), false, &mut notices).unwrap();
        assert!(names(&tools).contains(&"edit_document"));
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("RUSTPAD_DENY_TOOLS does not mention edit_document"));
        for deny in ["set_document,edit_document", "edit_*"] {
            let mut notices = Vec::new();
            select(None, Some(deny), false, &mut notices).unwrap();
            assert!(notices.is_empty(), "{deny}: {notices:?}");
        }
        // Not offered anyway: nothing to say.
        for (allow, deny, read_only) in [
            (None, Some("set_document"), true),
            (Some("get_*"), Some("get_stats"), false),
            (None, None, false),
        ] {
            let mut notices = Vec::new();
            select(allow, deny, read_only, &mut notices).unwrap();
            assert!(notices.is_empty(), "{allow:?} {deny:?}: {notices:?}");
        }
    }

    #[test]
    fn defaults_offer_everything_and_read_only_the_reads() {
        assert_eq!(pick(None, None, false).unwrap().len(), ALL.len());
        assert_eq!(pick(None, None, true).unwrap(), READS);
    }

    #[test]
    fn essential_is_the_curated_five() {
        assert_eq!(
            pick(Some("essential"), None, false).unwrap(),
            [
                "get_document",
                "get_document_info",
                "create_document",
                "set_document",
                "append_to_document"
            ]
        );
        assert_eq!(
            pick(Some(" Essential "), None, true).unwrap(),
            ["get_document", "get_document_info"]
        );
    }

    #[test]
    fn prefixes_exact_names_and_deny() {
        assert_eq!(
            pick(Some("get_*"), Some("get_stats"), false).unwrap(),
            ["get_document", "get_document_info", "get_changes"]
        );
        assert_eq!(
            pick(None, Some("set_*,replace_in_document"), false)
                .unwrap()
                .len(),
            ALL.len() - 3
        );
    }

    #[test]
    fn typos_stop_startup_and_name_the_entry() {
        let allowed = ["RUSTPAD_ALLOW_TOOLS", "\"get_documnt\""];
        refused(Some("get_documnt"), None, false, &allowed);
        refused(
            None,
            Some("nope*"),
            false,
            &["RUSTPAD_DENY_TOOLS", "\"nope*\""],
        );
        refused(Some("g*t"), None, false, &["not a valid entry"]);
        refused(
            Some("$(rm -rf /)"),
            None,
            false,
            &["an entry of 11 characters"],
        );
    }

    #[test]
    fn empty_results_stop_startup() {
        refused(
            None,
            Some("get_*,wait_*,count_*"),
            true,
            &["empty tool list"],
        );
        refused(Some("set_*"), None, true, &["RUSTPAD_READ_ONLY"]);
    }

    #[test]
    fn read_only_refuses_a_named_write_tool_and_warns_on_patterns() {
        let named = ["set_document", "RUSTPAD_READ_ONLY"];
        refused(Some("get_document,set_document"), None, true, &named);
        let mut notices = Vec::new();
        let tools = select(Some("get_document,set_*"), None, true, &mut notices).unwrap();
        assert_eq!(names(&tools), ["get_document"]);
        assert!(notices[0].contains("\"set_*\""));
    }
}
