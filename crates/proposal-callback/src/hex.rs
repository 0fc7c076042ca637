//! Lower-case hexadecimal: how tokens and body digests are written out.

use std::fmt::Write;

pub fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_digits_per_byte() {
        assert_eq!(super::hex(&[0xab, 0x01, 0x00]), "ab0100");
        assert_eq!(super::hex(&[]), "");
    }
}
