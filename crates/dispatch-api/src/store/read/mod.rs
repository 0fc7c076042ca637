//! The store's read models: what its reads return, named for what each shows, with only the
//! fields its screen uses. Rows stay inside the store (that is how logins leak); a read
//! model that goes on the wire as it is derives `Serialize` and `ToSchema` here, and
//! `views` (one file per route group) re-exports it beside the answers the routes compose.
//! Nothing here names HTTP (docs/architecture.md, "dispatch-api").

mod access_log;
mod dispatch;
mod fleet;
mod incident;
mod instant;
mod offload;
mod people;
mod reference;
mod times;

pub use access_log::*;
pub use dispatch::*;
pub use fleet::*;
pub use incident::*;
pub use offload::*;
pub use people::*;
pub use reference::*;
pub use times::*;

use serde::Serialize;

/// A value and its JSON, serialised once: the reference data's snapshot keeps its health
/// units so (see `catalog`), and a search answers by copying the JSON of the page it found.
#[derive(Debug, Clone)]
pub struct Serialised<T> {
    pub value: T,
    json: Box<[u8]>,
}

impl<T: Serialize> Serialised<T> {
    pub fn new(value: T) -> Self {
        let json = serde_json::to_vec(&value)
            .expect("a view has string keys only, so it always serialises")
            .into_boxed_slice();
        Self { value, json }
    }
}

/// `[a,b,...]` of the items' JSON: the bytes `serde_json` writes for the list of their values.
/// Read twice (the exact size, then the bytes), so nothing is collected on the way.
pub fn json_array<'a, T: 'a>(items: impl Iterator<Item = &'a Serialised<T>> + Clone) -> Vec<u8> {
    let (count, bytes) = items
        .clone()
        .fold((0, 0), |(n, len), i| (n + 1, len + i.json.len()));
    let len = bytes + usize::saturating_sub(count, 1) + 2;
    let mut out = Vec::with_capacity(len);
    out.push(b'[');
    for (n, item) in items.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&item.json);
    }
    out.push(b']');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::reference::HealthUnitOption;

    fn unit(id: i64, name: &str) -> HealthUnitOption {
        HealthUnitOption {
            id,
            name: name.to_owned(),
            city: "São José dos Campos".to_owned(),
            uf: "SP".to_owned(),
        }
    }

    #[test]
    fn a_list_of_serialised_values_is_what_serde_writes_for_the_values() {
        let units = [
            unit(1, "Hospital São José"),
            // Quotes, a backslash and control characters (escaped); DEL, a ligature and an
            // emoji (written as they are).
            unit(-2, "UBS \"Jardim\" \\ Norte\t\u{1}\u{7f} 🚑 ﬁm"),
            unit(i64::MAX, ""),
        ];
        let serialised: Vec<Serialised<HealthUnitOption>> =
            units.iter().cloned().map(Serialised::new).collect();
        for n in 0..=units.len() {
            let page: Vec<&Serialised<HealthUnitOption>> = serialised[..n].iter().collect();
            let bytes = json_array(page.iter().copied());
            assert_eq!(bytes, serde_json::to_vec(&units[..n]).unwrap(), "{n} items");
            assert_eq!(
                bytes.len(),
                bytes.capacity(),
                "one allocation of the exact size"
            );
        }
    }
}
