//! Small helpers on top of the `operational-transform` crate.

use operational_transform::{Operation, OperationSeq};

/// Where a code-point offset ends up once `operation` has been applied.
///
/// An insert exactly at the offset pushes it right, matching upstream, so a caret sitting where
/// someone types stays after the new text.
pub fn transform_index(operation: &OperationSeq, position: u32) -> u32 {
    // `remaining` counts how much of the old text still lies before the position; i64 keeps the
    // arithmetic free of overflow for any u32 offset and u64 op lengths in practice.
    let mut remaining = i64::from(position);
    let mut moved = remaining;
    for op in operation.ops() {
        match op {
            Operation::Retain(n) => remaining -= *n as i64,
            Operation::Insert(s) => moved += s.chars().count() as i64,
            Operation::Delete(n) => {
                moved -= remaining.min(*n as i64);
                remaining -= *n as i64;
            }
        }
        if remaining < 0 {
            break;
        }
    }
    moved.clamp(0, i64::from(u32::MAX)) as u32
}

/// Number of code points in `s`, the unit every OT length is counted in.
pub fn char_len(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(parts: &[Operation]) -> OperationSeq {
        parts.iter().cloned().collect()
    }

    #[test]
    fn insert_at_cursor_pushes_it_right() {
        let o = op(&[
            Operation::Retain(2),
            Operation::Insert("xy".into()),
            Operation::Retain(3),
        ]);
        assert_eq!(transform_index(&o, 2), 4);
        assert_eq!(transform_index(&o, 1), 1);
        assert_eq!(transform_index(&o, 5), 7);
    }

    #[test]
    fn delete_around_cursor_pulls_it_left() {
        let o = op(&[
            Operation::Retain(1),
            Operation::Delete(3),
            Operation::Retain(2),
        ]);
        assert_eq!(transform_index(&o, 0), 0);
        assert_eq!(transform_index(&o, 2), 1);
        assert_eq!(transform_index(&o, 5), 2);
    }
}
