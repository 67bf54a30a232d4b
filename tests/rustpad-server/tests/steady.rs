//! The steady person of the load bench: it types at its pace, joins again
//! when Rustpad drops it, and counts what others' doings sent it.

mod common;

use std::time::Duration;

use common::*;
use rustpad_test_server::person::{Person, type_steadily};
use rustpad_test_server::{Seed, TestServer};

/// How many letters the pad's first line has after its `P:`.
fn letters(server: &TestServer, pad: &str) -> usize {
    let text = server.text(pad);
    let first = text.split('\n').next().unwrap_or_default();
    first.chars().count().saturating_sub(2)
}

/// Waits (a hang guard, not a timing check) until the pad's first line has
/// at least `count` letters after its `P:`.
async fn typed_at_least(server: &TestServer, pad: &str, count: usize) {
    for _ in 0..1_000 {
        if letters(server, pad) >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "the person never typed {count} letters: {:?}",
        server.text(pad)
    );
}

fn seed(text: &str) -> Seed {
    Seed {
        text: Some(text.to_owned()),
        ..Seed::default()
    }
}

#[tokio::test]
async fn a_steady_person_rejoins_when_dropped_and_counts_what_others_sent() {
    let server = start().await;
    server.seed("steady", &seed("P:\nrest\n")).unwrap();
    let url = server.socket_url("steady");
    let others = async {
        typed_at_least(&server, "steady", 3).await;
        // Someone else joins, edits the second line and leaves: a name, an
        // entry and a departure reach the person.
        let mut other = Person::join(&url, "other").await.unwrap();
        other.set_text("P:\nREST\n").await.ok();
        let other_text = other.text().to_owned();
        other.leave().await;
        assert!(other_text.ends_with("REST\n"), "{other_text:?}");
        // A keystroke acknowledged after the other's edit: Rustpad sends a
        // connection the history in order, so the person has that entry.
        let typed = letters(&server, "steady");
        typed_at_least(&server, "steady", typed + 1).await;
        // Replacing the pad ends every connection to it.
        server.seed("steady", &seed("P:\nagain\n")).unwrap();
        typed_at_least(&server, "steady", 2).await;
    };
    let report = type_steadily(&url, "steady", Duration::from_millis(20), others).await;
    assert_eq!(report.disconnections, 1, "{report:?}");
    assert_eq!(report.typed.chars().count() as u64, report.acknowledged);
    assert!(report.acknowledged >= 5, "{report:?}");
    // Since it joined again, the pad holds what it typed after that, in order.
    let text = server.text("steady");
    let first = text.split('\n').next().unwrap().strip_prefix("P:").unwrap();
    assert!(
        !first.is_empty() && report.typed.ends_with(first),
        "{text:?} {report:?}"
    );
    assert!(text.ends_with("\nagain\n"), "{text:?}");
    assert!(report.heard.entries >= 1, "{report:?}");
    // The other's name at least (its departure may still be on its way when
    // the pad is replaced; names and edits come on separate paths, so even
    // the name is not certain: it was sent before the edit, and a keystroke's
    // round trip after it).
    assert!(report.heard.relayed >= 1, "{report:?}");
}
