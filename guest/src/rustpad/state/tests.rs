//! A session's view of who is there, driven by Rustpad's frames.

use std::time::{Duration, Instant};

use super::*;

fn absorb(state: &mut PadState, frames: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    for frame in frames {
        state.absorb(frame, deadline).unwrap();
    }
}

/// Joined as connection 9 a pad whose history holds a seed and connection
/// 4's mark, with no edit after it; the snapshot lists 4 by `listing`.
fn joined_beside_a_mark(track: Track, listing: &str) -> PadState {
    let mut state = PadState::new("pad", track);
    absorb(
        &mut state,
        &[
            r#"{"Identity":9}"#,
            r#"{"History":{"start":0,"operations":[{"id":18446744073709551615,"operation":["abc"]},{"id":4,"operation":[3]}]}}"#,
            listing,
        ],
    );
    state
}

const BY_EMPTY_CARET: &str = r#"{"UserCursor":{"id":4,"data":{"cursors":[],"selections":[]}}}"#;
const BY_NAME: &str = r#"{"UserInfo":{"id":4,"info":{"name":"rustpad-mcp","hue":200}}}"#;
const GONE: &str = r#"{"UserInfo":{"id":4,"info":null}}"#;
/// This session's own mark, echoed back.
const OWN_MARK: &str = r#"{"History":{"start":2,"operations":[{"id":9,"operation":[3]}]}}"#;

#[test]
fn a_connection_listed_only_by_its_caret_may_be_there_until_it_leaves() {
    for listing in [BY_EMPTY_CARET, BY_NAME] {
        let mut state = joined_beside_a_mark(Track::TEXT, listing);
        assert!(state.may_be_present(4), "{listing}");
        assert!(!state.may_be_present(5));
        absorb(&mut state, &[GONE]);
        assert!(!state.may_be_present(4), "{listing}");
    }
    // Not listed at all: gone before this session joined.
    let state = joined_beside_a_mark(Track::TEXT, r#"{"Language":"rust"}"#);
    assert!(!state.may_be_present(4));
}

#[test]
fn a_write_under_way_listed_only_by_its_caret_is_awaited() {
    let track = Track::TEXT.with_authorship();
    for listing in [BY_EMPTY_CARET, BY_NAME] {
        let mut state = joined_beside_a_mark(track, listing);
        absorb(&mut state, &[OWN_MARK]);
        let ahead = state.ahead().unwrap();
        assert_eq!(ahead.awaited, [4], "{listing}");
    }
    // Listed by neither: it had left, and every edit it made is in.
    let mut state = joined_beside_a_mark(track, r#"{"Language":"rust"}"#);
    absorb(&mut state, &[OWN_MARK]);
    assert!(state.ahead().unwrap().done());
}
