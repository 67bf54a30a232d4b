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

#[test]
fn a_connections_second_write_takes_its_place_from_its_own_mark() {
    // Connection 9 made one write; 4 marked after it; now 9 marks again.
    let mut state = PadState::new("pad", Track::TEXT.with_authorship());
    absorb(
        &mut state,
        &[
            r#"{"Identity":9}"#,
            r#"{"History":{"start":0,"operations":[{"id":18446744073709551615,"operation":["abc"]}]}}"#,
            BY_NAME,
            r#"{"History":{"start":1,"operations":[{"id":9,"operation":[3]},{"id":9,"operation":[3,"d"]},{"id":4,"operation":[4]}]}}"#,
        ],
    );
    assert!(state.ahead().is_none(), "no write of its own under way");
    absorb(
        &mut state,
        &[r#"{"History":{"start":4,"operations":[{"id":9,"operation":[4]}]}}"#],
    );
    assert_eq!(state.ahead().unwrap().awaited, [4]);
    absorb(
        &mut state,
        &[r#"{"History":{"start":5,"operations":[{"id":4,"operation":[4,"e"]}]}}"#],
    );
    assert!(state.ahead().unwrap().done());
}

#[test]
fn a_fast_read_that_gives_up_half_way_leaves_the_marks_as_they_were() {
    // Connection 3 marks in one frame and edits in the next, whose second
    // entry is in a shape the fast reader does not take (keys the other
    // way round), so that frame is read again the careful way.
    let mut state = PadState::new("pad", Track::LENGTH.with_people());
    absorb(
        &mut state,
        &[
            r#"{"Identity":9}"#,
            r#"{"History":{"start":0,"operations":[{"id":18446744073709551615,"operation":["abc"]},{"id":3,"operation":[3]}]}}"#,
            r#"{"History":{"start":2,"operations":[{"id":3,"operation":[3,"d"]},{"operation":[4,"e"],"id":4}]}}"#,
        ],
    );
    let marked = state.marked.as_ref().unwrap();
    assert!(marked.finished(3) && marked.is_marked(3));
    assert!(!marked.is_marked(4));
    assert_eq!(state.revision(), 4);
}

#[test]
fn once_more_connections_are_listed_than_kept_any_may_be_there() {
    let mut state = PadState::new("pad", Track::TEXT);
    absorb(&mut state, &[r#"{"Identity":9}"#]);
    for id in 0..=MAX_USERS as u64 {
        let caret = format!(
            r#"{{"UserCursor":{{"id":{},"data":{{"cursors":[],"selections":[]}}}}}}"#,
            100 + id
        );
        absorb(&mut state, &[&caret]);
    }
    // One was dropped; some kept ones leave: the dropped one may still be open.
    for id in 0..10 {
        let gone = format!(r#"{{"UserInfo":{{"id":{},"info":null}}}}"#, 100 + id);
        absorb(&mut state, &[&gone]);
    }
    assert!(state.may_be_present(100 + MAX_USERS as u64));
    assert!(state.may_be_present(5));
}
