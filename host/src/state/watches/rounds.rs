//! The watcher of one subject: round after round of the component's
//! `watch` export, each in a fresh instance, and between rounds the
//! connection a round handed back, held without running anything.

use super::*;

/// The watcher of one subject: rounds of the component's `watch`, until
/// nobody needs it (it is aborted then, which closes a held connection) or
/// the watchers are gone.
pub(super) async fn watch_rounds(watchers: Weak<Watchers>, subject: String, from: Option<String>) {
    let mut last = from.map(Resume::at);
    let mut lost = false;
    let mut retry = RETRY_FIRST;
    // Held connections that ended in a row without a message worth a round:
    // the second waits a while, so a Rustpad that drops every look at once
    // is not joined again and again without pause.
    let mut ended = Duration::ZERO;
    let mut flooded = None;
    loop {
        if let Some(Resume {
            look: Some(look),
            wake,
            ..
        }) = &mut last
        {
            look.cap_at(LIVE_MESSAGE_BYTES);
            match look.wait_for(wake).await {
                Woken::Wake => {
                    ended = Duration::ZERO;
                    (lost, retry) = (false, RETRY_FIRST);
                }
                Woken::Ended => {
                    (lost, retry) = (false, RETRY_FIRST);
                    tokio::time::sleep(ended).await;
                    ended = (ended * 2).clamp(RETRY_FIRST, RETRY_MOST);
                }
                // As a round that cannot go on: told once, then watched afresh later.
                Woken::Flooded(reason) => flooded = Some(reason),
            }
        }
        let Some(rounds) = watchers.upgrade().map(|w| w.rounds.clone()) else {
            return;
        };
        let cursor = last.as_ref().map(|last| last.cursor.clone());
        let round = match flooded.take() {
            Some(reason) => Round::Lost(reason),
            None => rounds.round(&subject, last.take()).await,
        };
        let Some(watchers) = watchers.upgrade() else {
            return;
        };
        match round {
            Round::Changed(next) => {
                last = Some(next);
                (lost, retry) = (false, RETRY_FIRST);
                watchers.tell(&subject);
                drop(watchers);
                tokio::time::sleep(COALESCE).await;
            }
            Round::Quiet(next) => {
                // A quiet round that hands back a look has not shown the
                // pad is well yet: one that floods drains to a momentary
                // gap and is quiet, then floods the hold. Its hold decides,
                // so a flood is told once and retried at a growing pace.
                if next.look.is_none() {
                    (lost, retry) = (false, RETRY_FIRST);
                }
                last = Some(next);
            }
            Round::Lost(reason) => {
                last = cursor.map(Resume::at);
                if !lost {
                    eprintln!("rustpad-mcp: a watched pad cannot be watched for now: {reason}");
                    watchers.tell(&subject);
                    lost = true;
                }
                drop(watchers);
                tokio::time::sleep(retry).await;
                retry = (retry * 2).min(RETRY_MOST);
            }
        }
    }
}
