//! Neighbour context (issue 28, item 4), on every backend: the facts remembered just
//! before and after a hit in the same session share its score, so the reply that answers a
//! question without repeating its words is found; only the same user's, kind's and
//! session's records, admitted by the search's filter, and none at weight 0.

use std::sync::Arc;

use mindgate_memory::time::ManualClock;
use mindgate_memory::*;

use super::{ids, opts, setup};

fn said(session: &str, text: &str, id: &str) -> NewFact {
    let mut f = NewFact::new(Scope::user("u1").with_session(session), text);
    f.meta.id = Some(id.to_owned());
    f
}

/// The ferry is booked in the turn after the one naming it: plain search misses the
/// booking, neighbour context finds it (signal `neighbour`) right below the turn it
/// follows; a fact of another session written in between, another user's fact in a
/// session of the same name and a fact without a session get no share.
pub fn a_neighbour_turn_is_found_that_plain_search_misses<S: MemoryStore>(
    make: &dyn Fn(Arc<ManualClock>) -> S,
) {
    let (s, _) = setup(make);
    let facts = [
        said("trip", "Ada: should we take the ferry to Bergen?", "ask"),
        said("work", "Bo: the quarterly numbers look fine", "work"),
        said("trip", "Bo: done, booked it for Friday at nine", "booked"),
        said("trip", "Ada: great, I will pack tonight", "pack"),
        said("trip", "Bo: pick up milk on the way home", "far"),
    ];
    for f in facts {
        s.semantic().remember(f).unwrap();
    }
    let mut other = NewFact::new(
        Scope::user("u2").with_session("trip"),
        "Cy: a stranger's note in a session of the same name",
    );
    other.meta.id = Some("other".to_owned());
    s.semantic().remember(other).unwrap();
    s.semantic()
        .remember(NewFact::new(Scope::user("u1"), "Ada: Sundays are quiet"))
        .unwrap();

    // Lexical, so that the test embedder's vectors bring nothing else (neighbour context
    // runs the same in every mode).
    let question = || {
        let mut o = opts("When is the ferry to Bergen?");
        o.mode = Some(SearchMode::Lexical);
        o
    };
    let mut plain = question();
    plain.neighbour_weight = Some(0.0);
    assert_eq!(ids(&s.search(&plain).unwrap()), vec!["ask"]);

    // The default: the two turns on each side within the session share the hit's score.
    let hits = s.search(&question()).unwrap();
    assert_eq!(ids(&hits), vec!["ask", "booked", "pack"]);
    let share = hits[1].signals["neighbour"];
    assert!(share > 0.0 && share <= 0.5, "{share}");
    assert!((hits[1].score - share).abs() < 1e-9, "{:?}", hits[1]);
    assert!(hits[0].score <= 1.0 && !hits[0].signals.contains_key("neighbour"));

    // The filter holds for neighbours: a forgotten one never comes back (the window is
    // counted in write order, then filtered).
    s.semantic().forget("booked", "test", Actor::User).unwrap();
    assert_eq!(ids(&s.search(&question()).unwrap()), vec!["ask", "pack"]);

    let mut bad = opts("ferry");
    for w in [-0.1, 1.5, f64::NAN] {
        bad.neighbour_weight = Some(w);
        assert!(
            matches!(
                s.search(&bad),
                Err(MemoryError::Invalid { field, .. }) if field == "neighbourWeight"
            ),
            "{w}"
        );
    }
}
