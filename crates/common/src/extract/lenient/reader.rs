//! The reading itself: a `serde` deserializer over a JSON value that notes a fault and goes on
//! with a stand-in, where `serde_json`'s own would stop (see the parent module).

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{
    self, DeserializeSeed, EnumAccess, IntoDeserializer, MapAccess, SeqAccess, VariantAccess,
    Visitor,
};
use serde_json::Value;

use super::{MAX_FAULTS, fault, join};
use crate::FieldError;

/// What one reading shares: the faults so far, the missing fields read as stand-ins, and the
/// fields of the outermost struct.
pub(super) struct Ctx<'a> {
    pub(super) faults: RefCell<Vec<FieldError>>,
    pub(super) absent: &'a BTreeSet<String>,
    pub(super) fields: Cell<Option<&'static [&'static str]>>,
}

impl Ctx<'_> {
    fn fault(&self, path: &str, message: String) {
        fault(&mut self.faults.borrow_mut(), path, message);
    }

    /// Whether no more faults are told.
    fn full(&self) -> bool {
        self.faults.borrow().len() >= MAX_FAULTS
    }
}

/// Why a reading stopped: a missing field (read again with a stand-in for it) or anything else
/// (a fault that has no stand-in). `at` is where, once known.
#[derive(Debug)]
pub(super) enum Error {
    Missing {
        field: &'static str,
        at: Option<String>,
    },
    Other {
        message: String,
        at: Option<String>,
    },
}

impl Error {
    fn at(mut self, path: &str) -> Self {
        let (Error::Missing { at, .. } | Error::Other { at, .. }) = &mut self;
        at.get_or_insert_with(|| path.to_owned());
        self
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Missing { field, .. } => write!(f, "missing field `{field}`"),
            Error::Other { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<M: std::fmt::Display>(message: M) -> Self {
        Error::Other {
            message: message.to_string(),
            at: None,
        }
    }

    fn missing_field(field: &'static str) -> Self {
        Error::Missing { field, at: None }
    }
}

/// What the JSON value is, for "must be X, not Y".
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One value of the body at `path`, or a stand-in (`None`) where the body has none that fits.
pub(super) struct Reader<'a> {
    pub(super) value: Option<&'a Value>,
    pub(super) path: String,
    pub(super) ctx: &'a Ctx<'a>,
}

impl<'a> Reader<'a> {
    /// Notes that the value here is not `expected`, and stands in for it.
    fn misfit(self, expected: &str) -> Self {
        match self.value {
            Some(v) => {
                let message = format!("must be {expected}, not {}", kind(v));
                self.refuse(message)
            }
            None => self,
        }
    }

    /// Notes `message` of the value here, and stands in for it.
    fn refuse(self, message: String) -> Self {
        self.ctx.fault(&self.path, message);
        Reader {
            value: None,
            ..self
        }
    }

    fn child(&self, value: Option<&'a Value>, path: String) -> Reader<'a> {
        Reader {
            value,
            path,
            ctx: self.ctx,
        }
    }

    /// An integer of a type from `min` to `max`.
    fn int<V: Visitor<'a>>(self, visitor: V, min: i128, max: i128) -> Result<V::Value, Error> {
        let n = match self.value {
            None => 0,
            Some(Value::Number(number)) => {
                match number
                    .as_i64()
                    .map(i128::from)
                    .or(number.as_u64().map(i128::from))
                {
                    Some(n) if (min..=max).contains(&n) => n,
                    Some(_) => {
                        let message = format!("must be an integer from {min} to {max}");
                        self.ctx.fault(&self.path, message);
                        0
                    }
                    None => {
                        let message = format!("must be an integer, not {number}");
                        self.ctx.fault(&self.path, message);
                        0
                    }
                }
            }
            Some(v) => {
                let message = format!("must be an integer, not {}", kind(v));
                self.ctx.fault(&self.path, message);
                0
            }
        };
        // In range of the visitor's type, so these cast exactly.
        if n < 0 {
            visitor.visit_i64(n as i64)
        } else {
            visitor.visit_u64(n as u64)
        }
        .map_err(|e: Error| e.at(&self.path))
    }

    /// Hands anything this reader does not check itself to serde_json's own reading of the
    /// value (whose first fault is the only one found there).
    fn json<V: Visitor<'a>>(
        self,
        visitor: V,
        read: impl FnOnce(&'a Value, V) -> Result<V::Value, serde_json::Error>,
        stand_in: impl FnOnce(V) -> Result<V::Value, Error>,
    ) -> Result<V::Value, Error> {
        match self.value {
            Some(v) => read(v, visitor).map_err(<Error as de::Error>::custom),
            None => stand_in(visitor),
        }
        .map_err(|e: Error| e.at(&self.path))
    }
}

macro_rules! ints {
    ($($method:ident: $t:ty;)+) => {$(
        fn $method<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
            self.int(visitor, i128::from(<$t>::MIN), i128::from(<$t>::MAX))
        }
    )+};
}

impl<'a> de::Deserializer<'a> for Reader<'a> {
    type Error = Error;

    ints! {
        deserialize_i8: i8;
        deserialize_i16: i16;
        deserialize_i32: i32;
        deserialize_i64: i64;
        deserialize_u8: u8;
        deserialize_u16: u16;
        deserialize_u32: u32;
        deserialize_u64: u64;
    }

    fn deserialize_i128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_i64(visitor)
    }

    fn deserialize_u128<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_u64(visitor)
    }

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.json(
            visitor,
            |v, vis| v.deserialize_any(vis),
            |vis| vis.visit_unit(),
        )
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::Bool(b)) => visitor.visit_bool(*b),
            Some(_) => self.misfit("`true` or `false`").deserialize_bool(visitor),
            None => visitor.visit_bool(false),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::Number(n)) => visitor.visit_f64(n.as_f64().unwrap_or_default()),
            Some(_) => self.misfit("a number").deserialize_f64(visitor),
            None => visitor.visit_f64(0.0),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_char<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::String(s)) if s.chars().count() == 1 => {
                visitor.visit_char(s.chars().next().unwrap_or_default())
            }
            Some(_) => self.misfit("one character").deserialize_char(visitor),
            None => visitor.visit_char(' '),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::String(s)) => visitor.visit_borrowed_str(s),
            Some(_) => self.misfit("a string").deserialize_str(visitor),
            None => visitor.visit_borrowed_str(""),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.json(
            visitor,
            |v, vis| v.deserialize_bytes(vis),
            |vis| vis.visit_borrowed_bytes(&[]),
        )
    }

    fn deserialize_byte_buf<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::Null) | None => visitor.visit_none(),
            Some(_) => visitor.visit_some(self),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_unit<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::Null) | None => visitor.visit_unit(),
            Some(_) => self.misfit("null").deserialize_unit(visitor),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_unit_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let path = self.path.clone();
        visitor.visit_newtype_struct(self).map_err(|e| e.at(&path))
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        let path = self.path.clone();
        match self.value {
            Some(Value::Array(items)) => visitor.visit_seq(Items {
                items: items.iter(),
                index: 0,
                parent: self,
            }),
            Some(_) => self.misfit("an array").deserialize_seq(visitor),
            None => visitor.visit_seq(Items {
                items: Default::default(),
                index: 0,
                parent: self,
            }),
        }
        .map_err(|e| e.at(&path))
    }

    fn deserialize_tuple<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.json(
            visitor,
            |v, vis| v.deserialize_map(vis),
            |vis| {
                vis.visit_map(de::value::MapDeserializer::new(
                    std::iter::empty::<((), ())>(),
                ))
            },
        )
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if self.path.is_empty() && self.ctx.fields.get().is_none() {
            self.ctx.fields.set(Some(fields));
        }
        let reader = match self.value {
            Some(Value::Object(_)) | None => self,
            Some(_) => self.misfit("an object"),
        };
        let path = reader.path.clone();
        let mut entries = Vec::new();
        let mut unknown = None;
        if let Some(Value::Object(map)) = reader.value {
            for (key, value) in map {
                if fields.contains(&key.as_str()) {
                    entries.push((key.as_str(), Some(value)));
                } else if !reader.ctx.full() {
                    let message = unknown.get_or_insert_with(|| unknown_field(fields));
                    reader.ctx.fault(&join(&path, key), message.clone());
                }
            }
        }
        for field in fields {
            if reader.ctx.absent.contains(&join(&path, field))
                && !entries.iter().any(|(k, _)| k == field)
            {
                entries.push((*field, None));
            }
        }
        visitor
            .visit_map(Fields {
                entries: entries.into_iter(),
                value: None,
                reader,
            })
            .map_err(|e| e.at(&path))
    }

    fn deserialize_enum<V: Visitor<'a>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let named = match self.value {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Object(map)) if map.len() == 1 => map.keys().next().map(String::as_str),
            _ => None,
        };
        if named.is_some_and(|n| variants.contains(&n)) {
            return self.json(
                visitor,
                |v, vis| v.deserialize_enum(name, variants, vis),
                |vis| vis.visit_unit(),
            );
        }
        let path = self.path.clone();
        let names: Vec<String> = variants.iter().map(|v| format!("`{v}`")).collect();
        let expected = format!("one of {}", names.join(", "));
        let reader = match named {
            // A word, but no variant's: nothing else to say of its kind.
            Some(_) => self.refuse(format!("must be {expected}")),
            None => self.misfit(&expected),
        };
        let Some(first) = variants.first() else {
            return Err(de::Error::custom(format!("{name} has no variant")));
        };
        visitor
            .visit_enum(StandInVariant {
                variant: first,
                reader,
            })
            .map_err(|e| e.at(&path))
    }

    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }
}

/// What an unknown key of a struct with `fields` is told.
fn unknown_field(fields: &[&str]) -> String {
    if fields.is_empty() {
        return "is not a field of this body, which has none (send `{}`)".to_owned();
    }
    let names: Vec<String> = fields.iter().map(|f| format!("`{f}`")).collect();
    format!(
        "is not a field of this body; its fields are {}",
        names.join(", ")
    )
}

/// A struct's fields as the body has them (known keys only), then the missing ones read as
/// stand-ins.
struct Fields<'a> {
    entries: std::vec::IntoIter<(&'a str, Option<&'a Value>)>,
    value: Option<(&'a str, Option<&'a Value>)>,
    reader: Reader<'a>,
}

impl<'a> MapAccess<'a> for Fields<'a> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((key, value));
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'a>>(&mut self, seed: S) -> Result<S::Value, Error> {
        let (key, value) = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value asked for before its key"))?;
        seed.deserialize(self.reader.child(value, join(&self.reader.path, key)))
    }
}

/// An array's items, each read at `parent[index]`.
struct Items<'a> {
    items: std::slice::Iter<'a, Value>,
    index: usize,
    parent: Reader<'a>,
}

impl<'a> SeqAccess<'a> for Items<'a> {
    type Error = Error;

    fn next_element_seed<S: DeserializeSeed<'a>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Error> {
        let Some(item) = self.items.next() else {
            return Ok(None);
        };
        let path = format!("{}[{}]", self.parent.path, self.index);
        self.index += 1;
        seed.deserialize(self.parent.child(Some(item), path))
            .map(Some)
    }
}

/// The stand-in of an enum that does not fit: its first variant, any content a stand-in.
struct StandInVariant<'a> {
    variant: &'static str,
    reader: Reader<'a>,
}

impl<'a> EnumAccess<'a> for StandInVariant<'a> {
    type Error = Error;
    type Variant = Reader<'a>;

    fn variant_seed<S: DeserializeSeed<'a>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Reader<'a>), Error> {
        let variant = seed.deserialize(self.variant.into_deserializer())?;
        Ok((variant, self.reader))
    }
}

impl<'a> VariantAccess<'a> for Reader<'a> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'a>>(self, seed: S) -> Result<S::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'a>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn struct_variant<V: Visitor<'a>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_struct(self, "", fields, visitor)
    }
}
