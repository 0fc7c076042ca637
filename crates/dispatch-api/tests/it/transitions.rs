//! Every incident state against every state-changing route, compared with the one table.

use dispatch_api::domain::incident::{self, State};

use crate::client::W;

/// The route that asks for each target state.
const ACTIONS: &[(&str, State)] = &[
    ("submit", State::AwaitingRegulation),
    ("decide", State::Regulated),
    ("dispatch", State::Dispatched),
    ("close", State::Closed),
    ("cancel", State::Cancelled),
    ("prank", State::Prank),
];

#[actix_web::test]
async fn every_state_and_route_is_allowed_exactly_as_the_table_says() {
    let w = W::new().await;
    for from in State::ALL {
        for (action, to) in ACTIONS {
            let (id, v) = w.incident_in(from.as_str()).await;
            let r = w.act(id, v, action).await;
            // A further unit on a dispatched incident is no move.
            let allowed = incident::transition(from, *to).is_ok()
                || (from == State::Dispatched && *to == State::Dispatched);
            if allowed {
                assert!(
                    r.status.is_success(),
                    "{from} --{action}--> {}: {}",
                    r.status,
                    r.body
                );
                assert_eq!(
                    r.body["version"].as_i64().or(r.body["version"].as_i64()),
                    Some(i64::from(v + 1))
                );
                assert_eq!(w.state(id).await, to.as_str(), "{from} --{action}");
            } else {
                r.problem(409, "invalid_transition");
                let detail = r.body["detail"].as_str().unwrap();
                assert!(detail.contains(from.as_str()), "{detail}");
                assert_eq!(w.version(id).await, v, "a refused write changes nothing");
                assert_eq!(w.state(id).await, from.as_str());
            }
        }
    }
}
