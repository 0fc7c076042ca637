//! Every field of a JSON body that does not fit its type, found at once.
//!
//! serde stops at the first field that does not fit, so a client fixing its body one
//! 400 at a time learns of a missing `complaint` only after it fixed the phone. [`misfit`]
//! reads the body (already known to be JSON) again: where a value is of the wrong kind, or out
//! of its type's range, or a field is unknown, it notes the fault and reads on with a stand-in
//! (empty text, zero, `false`, `null`, the first variant); where a field is missing, it notes
//! it and reads the body again with a stand-in for it. The result says every fault, and
//! gives the body as read with its stand-ins, for the route's own rules to judge the fields
//! that did fit.
//!
//! The bodies read this way are strict: a key that is no field of a struct is a fault, as
//! `#[serde(deny_unknown_fields)]` would have it. Inside a map (not a struct) and inside an
//! `untagged` or otherwise self-describing value, the first fault is the only one found.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::FieldError;

mod reader;
#[cfg(test)]
mod tests;

use reader::{Ctx, Error, Reader};

/// At most this many faults are told: a body within the limit could name thousands of
/// unknown fields, and no form has this many.
pub const MAX_FAULTS: usize = 32;

/// What a missing field's entry says.
pub const REQUIRED: &str = "is required";

/// A JSON body that does not fit `T`, read for every fault.
#[derive(Debug)]
pub struct Misfit<T> {
    /// Each field that does not fit, at most [`MAX_FAULTS`]; empty when the body as a whole
    /// is not of `T`'s kind (an array for a struct) or nothing could be said field by field.
    pub faults: Vec<FieldError>,
    /// `T` with a stand-in wherever a fault is, so that the body's own rules can judge the
    /// fields that fit; `None` when none could be built.
    pub stand_in: Option<T>,
    /// `T`'s fields, in their declared order (empty unless `T` is a struct).
    fields: &'static [&'static str],
}

impl<T> Misfit<T> {
    /// The faults and `more` (the body's own rules on [`Misfit::stand_in`]) in one list, in
    /// the order of `T`'s fields (unknown ones last), leaving out what `more` says of a field
    /// that did not fit (its stand-in is no value the client sent).
    pub fn and(self, more: impl IntoIterator<Item = FieldError>) -> Vec<FieldError> {
        let mut all = self.faults;
        let judged: Vec<FieldError> = more
            .into_iter()
            .filter(|m| !all.iter().any(|f| covers(&f.field, &m.field)))
            .collect();
        all.extend(judged);
        let place = |f: &FieldError| {
            let top = f.field.split(['.', '[']).next().unwrap_or_default();
            self.fields
                .iter()
                .position(|name| *name == top)
                .unwrap_or(self.fields.len())
        };
        all.sort_by_key(place);
        all.truncate(MAX_FAULTS);
        all
    }
}

/// Reads `value` as `T`, noting every fault instead of stopping at the first; see the
/// [module](self).
pub fn misfit<T: DeserializeOwned>(value: &Value) -> Misfit<T> {
    let mut absent = BTreeSet::new();
    loop {
        let ctx = Ctx {
            faults: RefCell::default(),
            absent: &absent,
            fields: Cell::new(None),
        };
        let read = T::deserialize(Reader {
            value: Some(value),
            path: String::new(),
            ctx: &ctx,
        });
        let fields = ctx.fields.get().unwrap_or_default();
        let mut faults = ctx.faults.into_inner();
        let stand_in = match read {
            Ok(t) => Some(t),
            Err(Error::Missing { field, at }) => {
                let path = join(at.as_deref().unwrap_or_default(), field);
                if !absent.contains(&path) && absent.len() < MAX_FAULTS {
                    absent.insert(path);
                    continue;
                }
                None
            }
            Err(Error::Other { message, at }) => {
                fault(&mut faults, at.as_deref().unwrap_or_default(), message);
                None
            }
        };
        for path in &absent {
            // What was said of the stand-in there (an empty text is no date) is not the
            // client's fault: the field is missing.
            faults.retain(|f| !covers(path, &f.field));
            fault(&mut faults, path, REQUIRED.to_owned());
        }
        if faults.iter().any(|f| f.field.is_empty()) {
            // The body as a whole is not what `T` reads; no field is to blame.
            faults.clear();
        }
        return Misfit {
            faults,
            stand_in,
            fields,
        };
    }
}

/// Whether a fault at `outer` already covers one at `path` (the same field, or inside it).
fn covers(outer: &str, path: &str) -> bool {
    outer.is_empty()
        || path
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// Notes a fault at `path`, unless one there or around it was noted already.
fn fault(faults: &mut Vec<FieldError>, path: &str, message: String) {
    if faults.len() < MAX_FAULTS && !faults.iter().any(|f| covers(&f.field, path)) {
        // A date the parser refused says the form it takes, not the parser's words.
        let message = super::date_time_hint(&message).unwrap_or(message);
        faults.push(FieldError {
            field: path.to_owned(),
            message,
        });
    }
}

/// `parent.key`, or `key` at the top: the field paths `parse_json` names.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}
