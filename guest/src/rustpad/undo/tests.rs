use super::*;

/// A small deterministic generator, so a failure names its seed.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

/// A record from `base` through `operations` (author, operation), in order.
fn record(base: &str, operations: &[(u64, OperationSeq)]) -> Since {
    let mut text = Rope::from_str(base);
    let mut since = Since::here(0, &text);
    for (revision, (author, operation)) in (1..).zip(operations) {
        apply_to_rope(&mut text, operation).unwrap();
        since.follow(revision, *author, operation.clone(), None, &text);
    }
    since
}

fn latest(base: &str, operations: &[(u64, OperationSeq)]) -> String {
    operations
        .iter()
        .fold(base.to_string(), |text, (_, op)| op.apply(&text).unwrap())
}

fn build(parts: &[(&str, u64)]) -> OperationSeq {
    let mut op = OperationSeq::default();
    for (kind, n) in parts {
        match *kind {
            "r" => op.retain(*n),
            "d" => op.delete(*n),
            text => op.insert(text),
        }
    }
    op
}

#[test]
fn an_append_is_taken_back_and_a_persons_typing_stays() {
    let base = "one\ntwo\n";
    let ours = build(&[("r", 8), ("three\nfour\n", 0)]);
    // A person types "X" at the start while and after we append.
    let theirs = build(&[("X", 0), ("r", 19)]);
    let history = [(7, ours), (3, theirs)];
    let undo = take_back(&record(base, &history), |_, author| author == 7).unwrap();
    let now = latest(base, &history);
    assert_eq!(undo.operation.apply(&now).unwrap(), "Xone\ntwo\n");
    assert_eq!(undo.entries, 1);
    assert!(undo.kept_inside.is_empty());
}

#[test]
fn a_deleted_paragraph_comes_back_at_its_place() {
    let base = "keep\nparagraph\nend\n";
    let delete = build(&[("r", 5), ("d", 10), ("r", 4)]);
    let elsewhere = build(&[("r", 9), ("!", 0)]);
    let history = [(1, delete), (2, elsewhere)];
    let undo = take_back(&record(base, &history), |_, author| author == 1).unwrap();
    let now = latest(base, &history);
    assert_eq!(now, "keep\nend\n!");
    assert_eq!(
        undo.operation.apply(&now).unwrap(),
        "keep\nparagraph\nend\n!"
    );
}

#[test]
fn typing_inside_text_taken_back_stays_and_is_reported() {
    let base = "";
    let ours = build(&[("ABCDEF", 0)]);
    let inside = build(&[("r", 3), ("xy", 0), ("r", 3)]);
    let history = [(7, ours), (3, inside)];
    let undo = take_back(&record(base, &history), |_, author| author == 7).unwrap();
    let now = latest(base, &history);
    assert_eq!(undo.operation.apply(&now).unwrap(), "xy");
    assert_eq!(undo.kept_inside, vec![3]);
}

#[test]
fn taking_back_twice_takes_nothing_the_second_time() {
    let base = "a\n";
    let ours = build(&[("r", 2), ("b\n", 0)]);
    let mut history = vec![(7, ours)];
    let undo = take_back(&record(base, &history), |_, author| author == 7).unwrap();
    history.push((8, undo.operation));
    // The same change chosen again: carried over the revert's entry, its
    // inverse has nothing left to take back, and nothing comes back either.
    let again = take_back(&record(base, &history), |_, author| author == 7).unwrap();
    let now = latest(base, &history);
    assert_eq!(now, "a\n");
    assert!(again.operation.is_noop(), "{:?}", again.operation);
}

#[test]
fn a_revert_run_again_puts_nothing_back_twice() {
    let base = "keep\nparagraph\nend\n";
    let delete = build(&[("r", 5), ("d", 10), ("r", 4)]);
    let mut history = vec![(1, delete)];
    let first = take_back_once(&record(base, &history), |_, author| author == 1, &[]).unwrap();
    history.push((9, first.operation));
    assert_eq!(latest(base, &history), base);
    // Alone, the deletion's inverse would insert the paragraph a second time.
    let naive = take_back(&record(base, &history), |_, author| author == 1).unwrap();
    assert_ne!(naive.operation.apply(base).unwrap(), base);
    let again = take_back_once(&record(base, &history), |_, author| author == 1, &[9]).unwrap();
    assert_eq!(again.operation.apply(base).unwrap(), base);
    assert_eq!(again.entries, 1);
    // A revert of something else is left alone: taking back a later change
    // does not bring the paragraph's deletion back.
    history.push((2, build(&[("r", 19), ("more\n", 0)])));
    let other = take_back_once(&record(base, &history), |_, author| author == 2, &[9]).unwrap();
    assert_eq!(
        other.operation.apply(&latest(base, &history)).unwrap(),
        base
    );
}

/// Up to `count` edits stated against `base`, each inside its own stretch
/// of it, away from the others' edges, so that none depends on another.
fn independent_edits(rng: &mut XorShift, base: &str, count: usize) -> Vec<OperationSeq> {
    let length = base.chars().count() as u64;
    let stretch = length / count as u64;
    (0..count as u64)
        .map(|i| {
            let (start, end) = (i * stretch + 1, (i + 1) * stretch - 1);
            let at = start + rng.below(end - start);
            let deleting = rng.below(3).min(end - at);
            let mut op = OperationSeq::default();
            op.retain(at);
            op.delete(deleting);
            if deleting == 0 || rng.below(2) == 0 {
                op.insert(["é", "ab", "🎉", "x\n", "Z"][rng.below(5) as usize]);
            }
            op.retain(length - at - deleting);
            op
        })
        .collect()
}

/// Concurrent operations on one text, as a history: each carried over the
/// ones that landed before it.
fn serialise(stated: &[OperationSeq]) -> Vec<OperationSeq> {
    let mut landed: Vec<OperationSeq> = Vec::new();
    for op in stated {
        let mut carried = op.clone();
        for earlier in &landed {
            carried = carried.transform(earlier).unwrap().0;
        }
        landed.push(carried);
    }
    landed
}

/// The property: for edits that do not depend on each other (stated against
/// one text, in stretches apart), taking back any subset, in any order of
/// landing, leaves what a history without that subset would have made.
/// Where a kept edit depends on an undone one (typing inside inserted text,
/// deleting what the other deleted too), no history without the undone one
/// can hold the kept one as made, so there is nothing to compare with; the
/// other tests pin what happens there: the later typing stays.
#[test]
fn taking_back_independent_edits_equals_a_history_without_them() {
    for seed in 1..=400u64 {
        let mut rng = XorShift(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let base = "alpha\nbeta é\n🎉 gamma\ndelta epsilon\nzeta 漢字 eta\ntheta\n";
        let count = 1 + rng.below(6) as usize;
        let mut stated = independent_edits(&mut rng, base, count);
        for i in (1..count).rev() {
            stated.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let undone: Vec<bool> = (0..count).map(|_| rng.below(2) == 0).collect();
        let history: Vec<(u64, OperationSeq)> = serialise(&stated)
            .into_iter()
            .enumerate()
            .map(|(i, op)| (i as u64, op))
            .collect();
        let undo = take_back(&record(base, &history), |revision, _| {
            undone[revision as usize - 1]
        })
        .unwrap();
        let got = undo.operation.apply(&latest(base, &history)).unwrap();
        let kept: Vec<OperationSeq> = stated
            .iter()
            .zip(&undone)
            .filter(|(_, undone)| !**undone)
            .map(|(op, _)| op.clone())
            .collect();
        let expected = serialise(&kept)
            .iter()
            .fold(base.to_string(), |text, op| op.apply(&text).unwrap());
        assert_eq!(got, expected, "seed {seed}: undone {undone:?}");
    }
}
