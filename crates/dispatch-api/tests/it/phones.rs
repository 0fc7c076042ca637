//! One caller, whatever the spelling of their phone: `+55 12 99100-4321`,
//! `(12) 99100-4321` and `12991004321` are the same number in the prank-call lookup, on the
//! regulation screen and in the writes.

use serde_json::json;

use crate::client::W;

/// A phone as a path segment.
fn encoded(phone: &str) -> String {
    phone
        .replace('+', "%2B")
        .replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// The three spellings of one number (`n` picks the number).
fn spellings(n: usize) -> [String; 3] {
    [
        format!("+55 12 99876-543{n}"),
        format!("(12) 99876-543{n}"),
        format!("1299876543{n}"),
    ]
}

#[actix_web::test]
async fn a_prank_call_recorded_in_one_spelling_is_found_with_the_others() {
    let w = W::new().await;
    for recorded in 0..3 {
        let phones = spellings(recorded);
        let r = w
            .post(
                "/incident",
                "tarm",
                None,
                json!({"caller_name": "Trote", "caller_phone": phones[recorded],
                       "address": "Rua A, 1", "complaint": "nada"}),
            )
            .await;
        assert_eq!(r.status.as_u16(), 201, "{}", r.body);
        let prank = r.body["id"].as_i64().unwrap();
        let r = w
            .post(
                &format!("/incident/{prank}/prank-call"),
                "tarm",
                Some(1),
                json!({}),
            )
            .await;
        assert_eq!(r.ok()["state"], "prank");
        for lookup in &phones {
            let found = w
                .api
                .get(
                    "regulador",
                    &format!("/incident/prank-calls/{}", encoded(lookup)),
                )
                .await;
            let found = found.ok();
            assert_eq!(found["phone"], format!("1299876543{recorded}"), "{lookup}");
            assert_eq!(found["total"], 1, "{lookup}: {found}");
            assert_eq!(found["calls"][0]["incident_id"], prank, "{lookup}");
        }
        // The same caller calls again, spelt another way: the regulator sees the prank.
        let again = &phones[(recorded + 1) % 3];
        let r = w
            .post(
                "/incident",
                "tarm",
                None,
                json!({"caller_name": "Trote", "caller_phone": again,
                       "address": "Rua A, 1", "complaint": "de novo"}),
            )
            .await;
        let id = r.body["id"].as_i64().unwrap();
        let reg = w
            .api
            .get("regulador", &format!("/incident/{id}/regulation"))
            .await;
        let pranks = &reg.ok()["prank_calls"];
        assert_eq!(pranks["phone"], format!("1299876543{recorded}"));
        assert_eq!(pranks["total"], 1, "{again}: {pranks}");
        assert_eq!(pranks["calls"][0]["incident_id"], prank);
    }
}

#[actix_web::test]
async fn a_phone_libphonenumber_cannot_read_is_refused_naming_the_field() {
    let w = W::new().await;
    let r = w
        .post(
            "/incident",
            "tarm",
            None,
            json!({"caller_name": "Ana", "caller_phone": "+999 1234 5678",
                   "address": "Rua A, 1", "complaint": "queda"}),
        )
        .await;
    assert_eq!(
        r.problem(400, "invalid_payload").as_deref(),
        Some("caller_phone")
    );
    let r = w
        .api
        .get("tarm", "/incident/prank-calls/%2B999%2012345678")
        .await;
    assert_eq!(
        r.problem(400, "invalid_parameter").as_deref(),
        Some("phone_number")
    );
}
