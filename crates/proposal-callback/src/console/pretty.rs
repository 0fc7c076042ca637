//! A stored callback body, indented for reading when it is JSON.
//!
//! The text is re-indented as it is, never parsed into a map and printed again: that would
//! sort the keys and keep only the last of a key given twice, and a receipt's body is shown
//! to find out exactly what the insurer sent (docs/proposal-callback.md, "The callback").

/// `raw` indented two spaces per level, when it is one JSON value; `None` otherwise.
pub fn indent_json(raw: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(raw).ok()?;
    let mut out = String::with_capacity(raw.len() * 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = raw.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.extend(std::iter::repeat_n("  ", depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                while chars.peek().is_some_and(|c| c.is_ascii_whitespace()) {
                    chars.next();
                }
                if chars.peek().is_some_and(|&n| n == '}' || n == ']') {
                    // An empty object or array stays on its line.
                    out.extend(chars.next());
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_and_a_key_given_twice() {
        let raw = r#"{"situacao":"RECUSADA","situacao":"APROVADA","b":[1, 2],"a":{},"t":"x, {y}: \"z\""}"#;
        assert_eq!(
            indent_json(raw).unwrap(),
            "{\n  \"situacao\": \"RECUSADA\",\n  \"situacao\": \"APROVADA\",\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": {},\n  \"t\": \"x, {y}: \\\"z\\\"\"\n}"
        );
    }

    #[test]
    fn anything_but_json_is_left_alone() {
        assert_eq!(indent_json("not json {"), None);
        assert_eq!(indent_json(""), None);
        assert_eq!(indent_json("[ ]").as_deref(), Some("[]"));
    }
}
