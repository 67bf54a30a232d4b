//! Where people in the pad see this server's caret while a write is
//! applied: at the first change of its operation, with a selection over the
//! text it replaces.

/// Where an operation first changes the text it applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// The offset, in code points.
    pub at: u64,
    /// How much of the text from there it removes in that change.
    pub replaced: u64,
}

/// The first change of an operation in Rustpad's wire form (retains as
/// positive numbers, deletions as negative ones, insertions as strings).
pub fn first_change(operation: &serde_json::Value) -> Option<Change> {
    let parts = operation.as_array()?;
    let mut at = 0u64;
    let mut parts = parts.iter().peekable();
    while let Some(n) = parts.peek().and_then(|part| part.as_u64()) {
        at += n;
        parts.next();
    }
    parts.peek()?;
    let mut replaced = 0u64;
    for part in parts {
        match (part.as_i64(), part.is_string()) {
            (Some(n), _) if n < 0 => replaced += n.unsigned_abs(),
            (_, true) => {}
            _ => break,
        }
    }
    Some(Change { at, replaced })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_write_shows_its_first_change() {
        let change = |operation: serde_json::Value| first_change(&operation);
        assert_eq!(
            change(json!([3, "ab", -2, 4])),
            Some(Change { at: 3, replaced: 2 })
        );
        assert_eq!(
            change(json!([3, -2, "ab", -1, 4, -5])),
            Some(Change { at: 3, replaced: 3 })
        );
        assert_eq!(change(json!(["ab"])), Some(Change { at: 0, replaced: 0 }));
        assert_eq!(change(json!([5])), None);
        assert_eq!(change(json!([])), None);
    }
}
