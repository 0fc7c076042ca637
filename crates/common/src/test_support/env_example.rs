//! The repository's `.env.example`, read as its sections of variables, and checked against
//! the variables a service's settings read (`crate::settings::FromSource::variables`).

/// `.env.example` at the root of the repository.
pub const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../.env.example");

/// The section whose variables both services read.
pub const BOTH: &str = "Both services";
/// The section read by docker compose, not by the binaries.
pub const COMPOSE: &str = "docker compose only";

/// A section of the file (`# Title` between two `# ---` lines) and the variables it sets or
/// shows commented out (`NAME=...` or `# NAME=...`).
#[derive(Debug)]
pub struct Section {
    pub title: String,
    pub names: Vec<String>,
}

/// The sections of `text`, in order; variables before the first section are in one titled "".
pub fn sections(text: &str) -> Vec<Section> {
    let lines: Vec<&str> = text.lines().collect();
    let mut sections = vec![Section {
        title: String::new(),
        names: Vec::new(),
    }];
    let rule = |line: &str| line.starts_with("# ---");
    let mut i = 0;
    while i < lines.len() {
        if rule(lines[i]) && lines.get(i + 2).is_some_and(|l| rule(l)) {
            let title = lines[i + 1].trim_start_matches('#').trim().to_owned();
            sections.push(Section {
                title,
                names: Vec::new(),
            });
            i += 3;
            continue;
        }
        if let Some(name) = variable(lines[i]) {
            sections.last_mut().expect("one section").names.push(name);
        }
        i += 1;
    }
    sections
}

/// The variable a line sets, or shows commented out.
fn variable(line: &str) -> Option<String> {
    let line = line.trim_start_matches('#').trim_start();
    let (name, _) = line.split_once('=')?;
    let valid = name.starts_with(|c: char| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    valid.then(|| name.to_owned())
}

/// What is wrong with `text` (the file) for a service reading `read`, whose own section is
/// titled `own`: a variable it reads that the file does not show (outside the compose
/// section), a variable of [`BOTH`] or of `own` it does not read, or one it reads shown as
/// compose's only. Empty when all is well.
pub fn problems(text: &str, own: &str, read: &[String]) -> Vec<String> {
    let sections = sections(text);
    let mut problems = Vec::new();
    for name in read {
        let shown = sections
            .iter()
            .any(|s| s.title != COMPOSE && s.names.contains(name));
        if !shown {
            problems.push(format!("{name} is read but not in .env.example"));
        }
    }
    for section in &sections {
        for name in &section.names {
            let is_read = read.contains(name);
            if (section.title == BOTH || section.title == own) && !is_read {
                problems.push(format!("{name} ({}) is not read", section.title));
            }
            if section.title == COMPOSE && is_read {
                problems.push(format!("{name} is read, yet shown as {COMPOSE}"));
            }
        }
    }
    problems
}
