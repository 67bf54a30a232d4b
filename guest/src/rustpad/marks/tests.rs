use super::*;

fn classes(entries: &[bool]) -> Vec<Class> {
    let mut classifier = Classifier::new();
    entries.iter().map(|e| classifier.follow(*e)).collect()
}

#[test]
fn each_edit_is_classed_by_the_marks_just_before_it() {
    use Class::*;
    // A connection that began by changing the text is never a writer:
    // Rustpad stores an edit that collided with another as a keep.
    assert_eq!(classes(&[false, true, true]), [Unmarked; 3]);
    assert_eq!(classes(&[true, false, true]), [Writer; 3]);
    assert_eq!(classes(&[true, true, false]), [Writer, Approved, Approved]);
    assert_eq!(
        classes(&[true, true, true, false, true]),
        [Writer, Approved, Restorer, Restorer, Writer]
    );
    assert_eq!(
        classes(&[true, true, true, true, true]),
        [Writer, Approved, Restorer, ApprovedRestorer, Writer]
    );
    assert!(ApprovedRestorer.approved() && ApprovedRestorer.restores());
    assert!(!Restorer.approved() && !Approved.restores());
    // Writes one after another on one connection: an approval covers
    // only the edit that ends its run, and an edit with no run before
    // it is nobody's write of ours.
    assert_eq!(
        classes(&[true, true, false, true, false, false]),
        [Writer, Approved, Approved, Writer, Writer, Unmarked]
    );
    assert_eq!(classes(&[false, true, false]), [Unmarked; 3]);
}

#[test]
fn a_run_of_five_says_the_connection_is_held() {
    use Class::*;
    let holding = [true; 5];
    // A held connection: its first write, the write that says it is
    // held, then appends with no mark before them.
    let entries = [&[true, false][..], &holding, &[false, false, false]].concat();
    assert_eq!(
        classes(&entries),
        [
            Writer,
            Writer,
            Writer,
            Approved,
            Restorer,
            ApprovedRestorer,
            Writer,
            Writer,
            Writer,
            Writer
        ]
    );
    // On it, a run still classes the edit that ends it, and only that
    // one: an approval is used once.
    let entries = [&holding[..], &[false, true, true, false, false]].concat();
    assert_eq!(
        classes(&entries)[5..],
        [Writer, Writer, Approved, Approved, Writer]
    );
    // A longer run says the same as five.
    let entries = [&[true; 7][..], &[false, false]].concat();
    assert_eq!(classes(&entries)[7..], [Writer, Writer]);
    // Fewer than five, or a connection that began by changing the text
    // (a person's, whose collided edits Rustpad stores as keeps), is
    // never held.
    assert_eq!(
        classes(&[true, true, true, true, false, false])[5],
        Unmarked
    );
    let entries = [&[false][..], &holding, &[false, false]].concat();
    assert_eq!(classes(&entries), [Unmarked; 8]);
}

#[test]
fn the_table_and_the_classifier_agree_on_every_short_history() {
    // Every history of one connection up to 10 entries, kept in the
    // table's byte and in the classifier's state alike.
    for length in 0..=10 {
        for bits in 0u32..1 << length {
            let mut marked = Marked::default();
            let mut classifier = Classifier::new();
            for at in 0..length {
                let keeps = bits & 1 << at != 0;
                marked.follow(2, keeps);
                classifier.follow(keeps);
                let what = format!("{bits:b} after {at}");
                assert_eq!(marked.finished(2), classifier.finished(), "{what}");
                assert_eq!(
                    marked.is_marked(2),
                    classifier.under_way() || classifier.finished(),
                    "{what}"
                );
                assert_eq!(marked.state(2), classifier.state, "{what}");
            }
        }
    }
}

#[test]
fn the_last_entries_decide() {
    let mut marked = Marked::default();
    let entries = [
        (3, true),
        (3, false),
        (5, false),
        (5, true),
        (u64::MAX, true),
        (70, true),
        (70, false),
        (70, false),
        (9, true),
        (9, false),
        (9, true),
    ];
    for (author, keeps) in entries {
        marked.follow(author, keeps);
    }
    // 3 made its write; 9 and u64::MAX are under way; 70 typed on; 5
    // began by changing the text, so its keep says nothing.
    for author in [3, 9, u64::MAX] {
        assert!(marked.is_marked(author), "{author}");
    }
    for author in [4, 5, 70] {
        assert!(!marked.is_marked(author), "{author}");
    }
    assert!(marked.finished(3));
    for author in [5, 9, 70, u64::MAX, 4] {
        assert!(!marked.finished(author), "{author}");
    }
    let mut connections: Vec<u64> = marked.connections().collect();
    connections.sort_unstable();
    assert_eq!(connections, [3, 5, 9, 70, u64::MAX]);
}

#[test]
fn a_write_is_finished_by_its_edit_and_a_further_edit_shows_a_person() {
    let mut marked = Marked::default();
    for number in [4, u64::MAX] {
        marked.follow(number, true);
        assert!(!marked.finished(number), "marked, no edit yet");
        marked.follow(number, false);
        assert!(marked.finished(number), "its edit made");
        marked.follow(number, false);
        assert!(!marked.finished(number), "typing on: not a write of ours");
        // A held connection's next write: under way, then done again.
        marked.follow(number, true);
        assert!(!marked.finished(number) && marked.is_marked(number));
        marked.follow(number, false);
        assert!(marked.finished(number));
    }
    // A held connection's appends, with no mark before them, are each
    // a finished write.
    for keeps in [
        true, false, true, true, true, true, true, false, false, false,
    ] {
        marked.follow(8, keeps);
    }
    assert!(marked.finished(8) && marked.is_marked(8));
    for keeps in [false, true, false] {
        marked.follow(6, keeps);
        assert!(!marked.finished(6) && !marked.is_marked(6), "a person's");
    }
    let mut classifier = Classifier::new();
    for (keeps, finished, under_way) in [
        (true, false, true),
        (true, false, true),
        (false, true, false),
        (false, false, false),
        (true, false, true),
        (false, true, false),
    ] {
        classifier.follow(keeps);
        assert_eq!(classifier.finished(), finished);
        assert_eq!(classifier.under_way(), under_way);
    }
    let mut person = Classifier::new();
    for keeps in [false, true, false] {
        person.follow(keeps);
        assert!(!person.finished() && !person.under_way());
    }
}

#[test]
fn only_a_negative_count_removes_text() {
    use serde_json::json;
    assert!(removes_nothing(&json!([12, "added"])));
    assert!(removes_nothing(&json!(["new", 3])));
    assert!(!removes_nothing(&json!([12, -1, "changed"])));
    assert!(!removes_nothing(&json!([-4])));
    assert!(!removes_nothing(&json!([2.5])));
    assert!(!removes_nothing(&json!({"not": "an operation"})));
}

#[test]
fn a_mark_keeps_the_whole_text() {
    assert_eq!(keep_all(7), serde_json::json!([7]));
    assert_eq!(keep_all(0), serde_json::json!([]));
}
