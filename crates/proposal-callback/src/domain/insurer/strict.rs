//! Strict JSON: a body is read into a `serde_json::Value` the usual way, except that it is
//! refused, naming the field, when
//!
//! - an object has the same key twice: serde_json keeps the last one silently, another
//!   reader may keep the first, so such a body could mean two things (422 `invalid_payload`);
//! - a string (or a key) holds a NUL character (`\u0000`): PostgreSQL cannot store it in a
//!   text column, so it would fail the transaction that applies the callback (422
//!   `invalid_payload`).
//!
//! The path of a field is written as elsewhere in the parsers: `data.result.code`,
//! `pendencias[1].documento`.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::ParseError;

/// `body` as a JSON value; see the module's rules.
pub(crate) fn parse(body: &[u8]) -> Result<Value, ParseError> {
    let refused = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    let seed = Seed {
        path: String::new(),
        refused: &refused,
    };
    let value = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    value.map_err(|e| match refused.into_inner() {
        Some(why) => why,
        None => ParseError::NotJson(e.to_string()),
    })
}

/// Deserializes one value at `path`, recording the first refusal in `refused`.
struct Seed<'r> {
    path: String,
    refused: &'r RefCell<Option<ParseError>>,
}

impl Seed<'_> {
    fn refuse<E: de::Error>(&self, field: &str, message: impl Into<String>) -> E {
        *self.refused.borrow_mut() = Some(ParseError::Shape {
            field: (!field.is_empty()).then(|| field.to_owned()),
            message: message.into(),
        });
        E::custom("refused")
    }

    fn child(&self, path: String) -> Self {
        Seed {
            path,
            refused: self.refused,
        }
    }

    fn key_path(&self, key: &str) -> String {
        let key = key.replace('\0', "\\u0000");
        if self.path.is_empty() {
            key
        } else {
            format!("{}.{key}", self.path)
        }
    }
}

const NUL: &str = "contains a NUL character (\\u0000), which cannot be stored";

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        if v.contains('\0') {
            return Err(self.refuse(&self.path, NUL));
        }
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        if v.contains('\0') {
            return Err(self.refuse(&self.path, NUL));
        }
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) =
            seq.next_element_seed(self.child(format!("{}[{}]", self.path, items.len())))?
        {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = self.key_path(&key);
            if key.contains('\0') {
                return Err(self.refuse(&path, format!("the key {NUL}")));
            }
            if object.contains_key(&key) {
                return Err(self.refuse(
                    &path,
                    "the key appears more than once in its object; send it once",
                ));
            }
            let value = map.next_value_seed(self.child(path))?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused_field(body: &str) -> (Option<String>, String) {
        match parse(body.as_bytes()) {
            Err(ParseError::Shape { field, message }) => (field, message),
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn reads_json_as_serde_json_does() {
        let body = r#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}],"c":"é\u00e9"}"#;
        assert_eq!(
            parse(body.as_bytes()).unwrap(),
            serde_json::from_str::<Value>(body).unwrap()
        );
        assert_eq!(parse(b"[]").unwrap(), json!([]));
    }

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        let (field, message) = refused_field(r#"{"situacao":"RECUSADA","situacao":"APROVADA"}"#);
        assert_eq!(field.as_deref(), Some("situacao"));
        assert!(message.contains("more than once"), "{message}");
        let (field, _) = refused_field(r#"{"data":{"result":{"code":10,"code":30}}}"#);
        assert_eq!(field.as_deref(), Some("data.result.code"));
        let (field, _) = refused_field(r#"{"p":[{"d":"a"},{"d":"b","d":"c"}]}"#);
        assert_eq!(field.as_deref(), Some("p[1].d"));
        // The same key in two different objects is fine.
        assert!(parse(br#"{"a":{"x":1},"b":{"x":1}}"#).is_ok());
    }

    #[test]
    fn nul_characters_are_refused_naming_the_field() {
        let (field, message) = refused_field(r#"{"parecer":{"observacoes":"a\u0000b"}}"#);
        assert_eq!(field.as_deref(), Some("parecer.observacoes"));
        assert!(message.contains("NUL"), "{message}");
        let (field, _) = refused_field(r#"{"p":["ok","\u0000"]}"#);
        assert_eq!(field.as_deref(), Some("p[1]"));
        let (field, _) = refused_field(r#"{"a\u0000":1}"#);
        assert_eq!(field.as_deref(), Some("a\\u0000"));
        let (field, _) = refused_field(r#""\u0000""#);
        assert_eq!(field, None);
    }

    #[test]
    fn not_json_stays_not_json() {
        for body in ["", "{", "{\"a\":1} x", "{\"a\":\"\u{0}\"}", "nul"] {
            assert!(
                matches!(parse(body.as_bytes()), Err(ParseError::NotJson(_))),
                "{body:?}"
            );
        }
    }
}
