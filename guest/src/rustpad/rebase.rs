//! Carrying an edit stated against an older text over what happened since,
//! exactly as Rustpad will: `ours.transform(theirs).0` for each later edit in
//! history order, ours first where both insert at one place. The same steps
//! give the later edits as they apply after ours, and those carry positions
//! in our result (where each piece of new text landed) forward.

use operational_transform::{OTError, Operation, OperationSeq};

/// Which way a position leans when someone inserts exactly there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lean {
    /// The start of a range: text inserted at it goes before the range.
    Start,
    /// The end of a range: text inserted at it goes after the range.
    End,
}

/// Our edit carried over the later ones.
pub struct Rebased {
    /// Our edit as it applies to the latest text.
    pub operation: OperationSeq,
    /// The later edits as they apply after ours, in order.
    theirs: Vec<OperationSeq>,
}

/// Transforms `ours` over `later`, in order.
pub fn rebase<'a>(
    ours: OperationSeq,
    later: impl IntoIterator<Item = &'a OperationSeq>,
) -> Result<Rebased, OTError> {
    let mut operation = ours;
    let mut theirs = Vec::new();
    for other in later {
        let (carried, after_ours) = operation.transform(other)?;
        operation = carried;
        theirs.push(after_ours);
    }
    Ok(Rebased { operation, theirs })
}

impl Rebased {
    /// Where the range `[start, end)` of the text our original edit produced
    /// lies once the later edits are applied after it.
    pub fn carry(&self, start: u64, end: u64) -> (u64, u64) {
        if start == end {
            let at = self
                .theirs
                .iter()
                .fold(start, |at, op| position_after(op, at, Lean::End));
            return (at, at);
        }
        let start = self
            .theirs
            .iter()
            .fold(start, |at, op| position_after(op, at, Lean::Start));
        let end = self
            .theirs
            .iter()
            .fold(end, |at, op| position_after(op, at, Lean::End));
        (start, end.max(start))
    }
}

/// Where a position of `operation`'s input text ends up in its output: moved
/// by what is inserted before it, pulled to the start of a deletion it falls
/// in.
pub fn position_after(operation: &OperationSeq, position: u64, lean: Lean) -> u64 {
    let (mut old, mut new) = (0u64, 0u64);
    for part in operation.ops() {
        match part {
            Operation::Retain(n) => {
                if position < old + n {
                    return new + (position - old);
                }
                old += n;
                new += n;
            }
            Operation::Delete(n) => {
                if position < old + n {
                    return new;
                }
                old += n;
            }
            Operation::Insert(text) => {
                if old == position && lean == Lean::End {
                    return new;
                }
                new += text.chars().count() as u64;
            }
        }
    }
    new + position.saturating_sub(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(parts: &[Operation]) -> OperationSeq {
        parts.iter().cloned().collect()
    }

    fn ins(text: &str) -> Operation {
        Operation::Insert(text.into())
    }

    #[test]
    fn positions_follow_inserts_and_collapse_into_deletions() {
        use Operation::{Delete, Retain};
        let op = seq(&[Retain(2), ins("XY"), Retain(2), Delete(2), Retain(1)]);
        assert_eq!(position_after(&op, 0, Lean::Start), 0);
        assert_eq!(position_after(&op, 2, Lean::Start), 4);
        assert_eq!(position_after(&op, 2, Lean::End), 2);
        assert_eq!(position_after(&op, 3, Lean::End), 5);
        assert_eq!(position_after(&op, 4, Lean::Start), 6);
        assert_eq!(position_after(&op, 5, Lean::Start), 6);
        assert_eq!(position_after(&op, 6, Lean::End), 6);
        assert_eq!(position_after(&op, 7, Lean::End), 7);
    }

    #[test]
    fn rebasing_matches_rustpad_and_carries_our_new_text() {
        use Operation::{Delete, Retain};
        // "hello world": we replace "world" with "there"; someone meanwhile
        // types "dear " at the start and "!" right after "world".
        let text = "hello world";
        let ours = seq(&[Retain(6), ins("there"), Delete(5)]);
        let first = seq(&[ins("dear "), Retain(11)]);
        let second = seq(&[Retain(16), ins("!")]);
        let rebased = rebase(ours.clone(), [&first, &second]).unwrap();
        let theirs = second.apply(&first.apply(text).unwrap()).unwrap();
        let result = rebased.operation.apply(&theirs).unwrap();
        assert_eq!(result, "dear hello there!");
        // The same by the other road: ours first, then the later edits carried over it.
        let ours_first = ours.apply(text).unwrap();
        let replayed = rebased
            .theirs
            .iter()
            .fold(ours_first, |text, op| op.apply(&text).unwrap());
        assert_eq!(replayed, result);
        // "there" was at 6..11 of our result; it is at 11..16 now.
        assert_eq!(rebased.carry(6, 11), (11, 16));
        assert_eq!(&result[11..16], "there");
    }

    #[test]
    fn an_insert_at_the_same_place_goes_after_ours() {
        use Operation::Retain;
        let ours = seq(&[Retain(1), ins("A"), Retain(1)]);
        let theirs = seq(&[Retain(1), ins("B"), Retain(1)]);
        let rebased = rebase(ours, [&theirs]).unwrap();
        let result = rebased
            .operation
            .apply(&theirs.apply("xy").unwrap())
            .unwrap();
        assert_eq!(result, "xABy");
        assert_eq!(rebased.carry(1, 2), (1, 2));
    }
}
