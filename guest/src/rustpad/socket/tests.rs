use super::*;

fn absorb(state: &mut PadState, frame: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    state.absorb(frame, deadline).unwrap();
}

#[test]
fn the_frames_tell_which_earlier_writes_are_under_way() {
    let mut state = PadState::new("pad", Track::TEXT.with_authorship());
    absorb(&mut state, r#"{"Identity":9}"#);
    absorb(
        &mut state,
        r#"{"History":{"start":0,"operations":[{"id":1,"operation":["abc"]},{"id":4,"operation":[3]},{"id":5,"operation":[3]}]}}"#,
    );
    // Writer 4 is still at the pad; writer 5 left before the snapshot.
    absorb(
        &mut state,
        r#"{"UserInfo":{"id":4,"info":{"name":"rustpad-mcp","hue":1}}}"#,
    );
    assert_eq!(
        state.ahead(),
        None,
        "nothing is ahead before this session's own mark"
    );
    absorb(
        &mut state,
        r#"{"History":{"start":3,"operations":[{"id":9,"operation":[3]}]}}"#,
    );
    assert_eq!(state.ahead().unwrap().awaited, [4]);
    absorb(&mut state, r#"{"UserInfo":{"id":4,"info":null}}"#);
    let ahead = state.ahead().unwrap();
    assert!(ahead.done() && ahead.left_since, "{ahead:?}");
}
