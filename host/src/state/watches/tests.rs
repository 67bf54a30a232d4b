//! Who may watch what: the caps, per scope, per client address and in all.

use super::*;
use crate::state::client_queue::outbox;

/// Rounds that never end: the tests look only at who may watch what.
struct Idle;

impl Rounds for Idle {
    fn round<'a>(
        &'a self,
        _subject: &'a str,
        _last: Option<Resume>,
    ) -> Pin<Box<dyn Future<Output = Round> + Send + 'a>> {
        Box::pin(std::future::pending())
    }
}

fn watches(subjects: &[&str]) -> Vec<Watch> {
    subjects
        .iter()
        .map(|subject| Watch {
            subject: subject.to_string(),
            update: format!("changed {subject}"),
            cursor: None,
        })
        .collect()
}

fn address(text: &str) -> Option<ClientAddress> {
    Some(ClientAddress::of(text.parse().unwrap()))
}

#[tokio::test]
async fn one_address_cannot_take_every_place_however_many_scopes_it_opens() {
    let limits = WatchLimits {
        pads: 6,
        per_session: 2,
        per_listen: 2,
        per_address: 4,
    };
    let watchers = Watchers::new(Arc::new(Idle), limits);
    let (out, _lines) = outbox(1 << 20);
    let one = address("127.0.0.1");
    let sessions: Vec<Scope> = (0..3)
        .map(|_| watchers.scope(2, out.clone(), one))
        .collect();
    sessions[0].watch_all(watches(&["a", "b"])).unwrap();
    sessions[1].watch_all(watches(&["c", "d"])).unwrap();
    let refused = sessions[2].watch_all(watches(&["e"])).unwrap_err();
    assert!(
        refused.message.contains("the clients of one address (127.0.0.1) may have at most 4 pads watched here at once, and this would make 5"),
        "{refused}"
    );
    assert_eq!(refused.kind, ErrorKind::Busy);
    // A pad the address watches already takes no new place.
    sessions[2].watch_all(watches(&["a"])).unwrap();
    // Another address still finds room, up to the process's cap.
    let other = watchers.scope(2, out.clone(), address("127.0.0.2"));
    other.watch_all(watches(&["e", "f"])).unwrap();
    let third = watchers.scope(2, out.clone(), address("::1"));
    let full = third.watch_all(watches(&["g"])).unwrap_err();
    assert!(
        full.message.contains("this server watches at most 6 pads"),
        "{full}"
    );
    assert_eq!(full.kind, ErrorKind::Busy);
    // What its scopes let go of is the address's again.
    drop(sessions);
    assert!(lock(&watchers.by_address).get(&one.unwrap()).is_none());
    let again = watchers.scope(4, out, one);
    again.watch_all(watches(&["a", "b", "c", "d"])).unwrap();
}
