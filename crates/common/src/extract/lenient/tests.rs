use serde::Deserialize;
use serde_json::json;

use super::*;

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Form {
    name: String,
    phone: String,
    age: Option<i32>,
    #[serde(default)]
    city: String,
    count: u8,
    kind: Option<Kind>,
    caller: Option<Caller>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Fall,
    Burn,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Caller {
    id: i64,
    tags: Vec<String>,
}

fn faults(m: &Misfit<Form>) -> Vec<(&str, &str)> {
    m.faults
        .iter()
        .map(|f| (f.field.as_str(), f.message.as_str()))
        .collect()
}

#[test]
fn every_field_that_does_not_fit_is_named_at_once() {
    let body = json!({
        "phone": 12,
        "age": 2_147_483_648_i64,
        "count": -1,
        "kind": "flood",
        "surprise": true,
        "caller": {"id": "7", "tags": ["a", 2]},
    });
    let m = misfit::<Form>(&body);
    assert_eq!(
        Misfit {
            faults: m.faults.clone(),
            stand_in: None::<()>,
            fields: m.fields,
        }
        .and([]),
        [
            ("name", REQUIRED),
            ("phone", "must be a string, not a number"),
            ("age", "must be an integer from -2147483648 to 2147483647"),
            ("count", "must be an integer from 0 to 255"),
            ("kind", "must be one of `fall`, `burn`"),
            ("caller.id", "must be an integer, not a string"),
            ("caller.tags[1]", "must be a string, not a number"),
            (
                "surprise",
                "is not a field of this body; its fields are `name`, `phone`, `age`, \
                     `city`, `count`, `kind`, `caller`"
            ),
        ]
        .map(|(field, message)| FieldError {
            field: field.into(),
            message: message.into()
        })
    );
    // Each fault read as a stand-in, every other value as sent.
    assert_eq!(
        m.stand_in,
        Some(Form {
            name: String::new(),
            phone: String::new(),
            age: Some(0),
            city: String::new(),
            count: 0,
            kind: Some(Kind::Fall),
            caller: Some(Caller {
                id: 0,
                tags: vec!["a".into(), String::new()],
            }),
        })
    );
}

#[test]
fn the_stand_in_holds_what_fits_and_empty_values_elsewhere() {
    let m = misfit::<Form>(&json!({"phone": 12, "age": 40, "city": "Natal"}));
    assert_eq!(
        faults(&m),
        [
            ("phone", "must be a string, not a number"),
            ("count", REQUIRED),
            ("name", REQUIRED),
        ]
    );
    assert_eq!(
        m.stand_in,
        Some(Form {
            name: String::new(),
            phone: String::new(),
            age: Some(40),
            city: "Natal".into(),
            count: 0,
            kind: None,
            caller: None,
        })
    );
}

#[test]
fn what_the_rules_say_of_a_field_that_did_not_fit_is_left_out() {
    let m = misfit::<Form>(&json!({"phone": 12, "count": 1}));
    let more = [
        ("phone", "must not be empty"),
        ("city", "must not be empty"),
    ]
    .map(|(field, message)| FieldError {
        field: field.into(),
        message: message.into(),
    });
    let all: Vec<(String, String)> = m
        .and(more)
        .into_iter()
        .map(|f| (f.field, f.message))
        .collect();
    assert_eq!(
        all,
        [
            ("name", REQUIRED),
            ("phone", "must be a string, not a number"),
            ("city", "must not be empty"),
        ]
        .map(|(f, m)| (f.to_owned(), m.to_owned()))
    );
}

#[test]
fn a_body_of_another_kind_names_no_field() {
    for body in [json!([1]), json!("x"), json!(null)] {
        let m = misfit::<Form>(&body);
        assert!(m.faults.is_empty(), "{body}: {:?}", m.faults);
    }
}

#[test]
fn a_body_that_fits_has_no_fault() {
    let m = misfit::<Form>(&json!({"name": "Ana", "phone": "1", "count": 3, "kind": "burn"}));
    assert!(m.faults.is_empty(), "{:?}", m.faults);
    assert_eq!(m.stand_in.unwrap().kind, Some(Kind::Burn));
}

#[test]
fn unknown_fields_are_told_up_to_the_limit() {
    let body: serde_json::Map<String, Value> =
        (0..1000).map(|i| (format!("x{i:04}"), json!(i))).collect();
    let m = misfit::<Form>(&Value::Object(body));
    assert_eq!(m.faults.len(), MAX_FAULTS);
}
