//! The pace every watch loop keeps, whichever side runs it: rustpad-mcp's
//! host (a watcher per pad, for sessions and listens) and the component's
//! own loop for a listen in a WebAssembly host. Both send the same updates
//! at the same pace from these.

use std::time::{Duration, Instant};

/// At most one update per pad in this interval. An update is a level
/// trigger ("read it again"), so a burst of typing is heard of once.
pub const COALESCE: Duration = Duration::from_secs(1);

/// An event stream with nothing to send says it is alive this often, so
/// proxies do not close it as idle and a client that went away is found.
pub const KEEPALIVE: Duration = Duration::from_secs(15);

/// What it says: a comment, which every event-stream client skips.
pub const KEEPALIVE_COMMENT: &[u8] = b": keepalive\n\n";

/// The longest a watch takes before it hands back (the component's round in
/// rustpad-mcp's host, which starts the next in a fresh instance).
pub const ROUND: Duration = Duration::from_secs(240);

/// The most messages a pad may send within one [`ROUND`] without a change
/// by anyone else before its watch gives up on it for a while: a round of
/// ordinary typing and caret moves by a few people is well within it, and a
/// pad that sends without pause is told of rather than read for ever.
pub const MAX_MESSAGES_PER_ROUND: usize = 20_000;

/// Pads one listen may name by default.
pub const PADS_PER_LISTEN: usize = 16;

/// When a pad whose last update went out at `told` may be heard of again.
pub fn next_update(told: Option<Instant>, now: Instant) -> Instant {
    told.map_or(now, |told| (told + COALESCE).max(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pad_is_heard_of_at_most_once_a_coalescing_interval() {
        let now = Instant::now();
        assert_eq!(next_update(None, now), now);
        assert_eq!(next_update(Some(now), now), now + COALESCE);
        let long_ago = now - 3 * COALESCE;
        assert_eq!(next_update(Some(long_ago), now), now);
    }
}
