use super::*;

fn fold_onto(mut authorship: Authorship, entries: &[(u64, &str)]) -> Authorship {
    for (author, json) in entries {
        let operation: Operation = serde_json::from_str(json).unwrap();
        authorship.follow(*author, &operation);
    }
    authorship
}

fn fold(entries: &[(u64, &str)]) -> Authorship {
    fold_onto(Authorship::new(), entries)
}

fn credit(own: u64, marked: u64) -> Credit {
    Credit { own, marked }
}

/// A person's "person", then a writer's " and server" (its mark first).
const A_PERSON_THEN_A_WRITER: [(u64, &str); 3] = [
    (u64::MAX, r#"["person"]"#),
    (1, "[6]"),
    (1, r#"[6," and server"]"#),
];

#[test]
fn what_a_revert_puts_back_is_credited_as_marked_text() {
    let written = fold(&A_PERSON_THEN_A_WRITER);
    let record = fold_onto(
        written,
        &[
            // A person's deletion of "person".
            (2, r#"[-6,11]"#),
            // A revert (three marks) puts "person" back.
            (3, "[11]"),
            (3, "[11]"),
            (3, "[11]"),
            (3, r#"["person",11]"#),
        ],
    );
    assert_eq!(record.class(3), Class::Restorer);
    // What came back counts as marked text, like the writer's: never
    // people's share, never this server's own.
    assert_eq!(record.in_text(), credit(0, 17));
    let mut all = OperationSeq::default();
    all.delete(17);
    assert_eq!(record.removed_by(&all), Some(credit(0, 17)));
    // The revert moved no window on: two people's entries, as before it.
    assert_eq!(record.unmarked_changes(), (2, 12));
}

#[test]
fn a_writers_text_is_credited_until_anyone_removes_it() {
    let record = fold(&A_PERSON_THEN_A_WRITER);
    assert_eq!(record.in_text(), credit(0, 11));
    assert_eq!(record.class(1), Class::Writer);
    // Someone else removes " and" (a writer's) and "on" (a person's).
    let mut record = record;
    let mut removal = OperationSeq::default();
    removal.retain(4);
    removal.delete(6);
    removal.retain(7);
    assert_eq!(record.removed_by(&removal), Some(credit(0, 4)));
    assert_eq!(record.removed_by(&OperationSeq::default()), None);
    record.follow(2, &serde_json::from_str(r#"[4,-6,7]"#).unwrap());
    assert_eq!(record.in_text(), credit(0, 7));
    assert_eq!(
        record.removals().unwrap(),
        [Removed {
            author: 2,
            class: Class::Unmarked,
            chars: 6,
            credit: credit(0, 4),
            unmarked_through: 2,
            unmarked_chars_through: 6 + 6,
        }]
    );
}

#[test]
fn only_a_writer_the_host_noted_at_its_last_entry_is_this_processs_own() {
    let entries = [
        (u64::MAX, r#"["person"]"#),
        (1, "[6]"),
        (1, r#"[6," one"]"#),
        (2, "[10]"),
        (2, r#"[10," two"]"#),
        (3, "[14]"),
        (3, r#"[14," three"]"#),
        // Unmarked: a person, whatever the host noted.
        (4, r#"[20," four"]"#),
    ];
    // Writer 1 as noted; writer 2 noted at another revision (another
    // Rustpad instance numbered a connection 2 too); writer 3 still
    // under way when the host was asked; writer 4 no writer at all.
    let noted = [(1, Some(3)), (2, Some(9)), (3, None), (4, Some(8))];
    let mut record = Authorship::new();
    record.know_own_writers(noted);
    let record = fold_onto(record, &entries);
    assert_eq!(record.in_text(), credit(4, 10));
    let mut everything = OperationSeq::default();
    everything.delete(25);
    assert_eq!(record.removed_by(&everything), Some(credit(4, 10)));
    // Without the host's record, every writer's text is only marked.
    assert_eq!(fold(&entries).in_text(), credit(0, 14));
}

#[test]
fn marked_entries_and_entries_that_change_nothing_do_not_move_the_unmarked_count() {
    let record = fold(&[
        (u64::MAX, r#"["abc"]"#),
        (1, "[3]"),
        (1, "[3]"),
        (1, "[-3]"),
        (2, r#"["x"]"#),
        (2, "[1]"),
        (2, "[]"),
    ]);
    assert_eq!(record.class(1), Class::Approved);
    assert_eq!(record.unmarked_changes(), (2, 4));
    assert_eq!(record.removals().unwrap()[0].unmarked_through, 1);
    assert_eq!(record.in_text(), Credit::default());
}

#[test]
fn a_writer_is_unfinished_from_its_mark_until_it_changes_the_text() {
    let mut record = fold(&[(u64::MAX, r#"["abc"]"#), (4, "[3]"), (5, "[3]")]);
    assert_eq!(
        record.unfinished_writers().collect::<Vec<_>>(),
        [(4, 2), (5, 3)]
    );
    // A second mark (an approved write) is still unfinished.
    record.follow(4, &serde_json::from_str("[3]").unwrap());
    record.follow(5, &serde_json::from_str(r#"[3,"d"]"#).unwrap());
    assert_eq!(record.unfinished_writers().collect::<Vec<_>>(), [(4, 2)]);
    // Someone whose first entry changes the text is no writer, whatever
    // follows (an edit of theirs that collided is stored as a keep).
    record.follow(6, &serde_json::from_str(r#"[4,"e"]"#).unwrap());
    record.follow(6, &serde_json::from_str("[5]").unwrap());
    assert_eq!(record.unfinished_writers().collect::<Vec<_>>(), [(4, 2)]);
    // A writer's connection that marks again after its edit has another
    // write under way, until that one's edit.
    record.follow(5, &serde_json::from_str("[5]").unwrap());
    assert_eq!(
        record.unfinished_writers().collect::<Vec<_>>(),
        [(4, 2), (5, 8)]
    );
    record.follow(5, &serde_json::from_str(r#"[5,"f"]"#).unwrap());
    assert_eq!(record.unfinished_writers().collect::<Vec<_>>(), [(4, 2)]);
}

#[test]
fn writes_one_after_another_on_one_connection_are_classed_each_by_its_mark() {
    let mut record = Authorship::new();
    // The host noted connection 1's second write (at revision 6) as its
    // own, not its first.
    record.know_own_writers([(1, Some(6))]);
    let record = fold_onto(
        record,
        &[
            (u64::MAX, r#"["abcdef"]"#),
            // An approved write removes "ab".
            (1, "[6]"),
            (1, "[6]"),
            (1, "[-2,4]"),
            // A plain write adds "X".
            (1, "[4]"),
            (1, r#"[4,"X"]"#),
            // An edit with no mark before it: not a write of ours.
            (1, "[-1,4]"),
        ],
    );
    let classes: Vec<Class> = (1..=7).map(|revision| record.class_at(revision)).collect();
    use Class::*;
    assert_eq!(
        classes,
        [
            Unmarked, Writer, Approved, Approved, Writer, Writer, Unmarked
        ]
    );
    assert_eq!(record.class_at(8), Unmarked);
    assert_eq!(record.class_at(0), Unmarked);
    assert_eq!(record.class(1), Unmarked);
    let removals = record.removals().unwrap();
    assert_eq!(removals.len(), 2);
    assert!(
        removals[0].class.approved(),
        "the approval covers its own edit"
    );
    assert!(!removals[1].class.approved(), "and no later one");
    // "X" is this process's own: the host noted that write; the
    // unmarked removal of "c" was a person's.
    assert_eq!(record.in_text(), credit(1, 0));
    assert!(record.is_own(1));
    assert_eq!(record.unfinished_writers().count(), 0);
}
