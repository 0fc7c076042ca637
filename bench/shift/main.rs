//! `bench/shift`: a dispatch centre's shift against a running dispatch-api, run by hand (not a
//! test). The same driver as the journey test (`driver.rs`), with more people: it prints each
//! screen's p50 and p99, the requests each screen takes, and the same figures for a one-person
//! shift run first (the baseline of the same run), with the ratio of the p99s.
//!
//! `bench/shift/run.sh` builds, seeds a database of its own, starts the service and runs this;
//! the people (id, name, profile, token) come in the JSON file `SHIFT_PEOPLE`.

mod driver;

use std::time::Duration;

use driver::{Config, Outcome, Person};
use serde_json::Value;

fn var(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn people(all: &[Value], profile: &str, n: usize) -> Vec<Person> {
    let found: Vec<Person> = all
        .iter()
        .filter(|p| p["profile"] == profile)
        .take(n)
        .map(|p| Person {
            id: p["id"].as_i64().unwrap(),
            name: p["name"].as_str().unwrap().to_owned(),
            token: p["token"].as_str().unwrap().to_owned(),
        })
        .collect();
    assert_eq!(found.len(), n, "SHIFT_PEOPLE has fewer than {n} {profile}");
    found
}

fn report(label: &str, o: &Outcome) {
    println!(
        "{label}: {} incidents, {} writes, {} socket messages in {:.1} s; {} send-tos, {} transfers, {} overrides; {} violations",
        o.incidents,
        o.writes,
        o.messages,
        o.elapsed.as_secs_f64(),
        o.send_tos,
        o.transfers,
        o.overrides,
        o.violations.len()
    );
    for v in o.violations.iter().take(10) {
        println!("  violation: {v}");
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let base = std::env::var("BASE").unwrap_or_else(|_| "http://127.0.0.1:18095".into());
    let file = std::env::var("SHIFT_PEOPLE").expect("SHIFT_PEOPLE: the people file");
    let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let (takers, regulators, fleet) =
        (var("CALL_TAKERS", 8), var("REGULATORS", 6), var("FLEET", 4));
    let incidents = var("INCIDENTS", 25);
    let config = |t, r, f, n| Config {
        base: base.clone(),
        call_takers: people(&all, "TARM", t),
        regulators: people(&all, "MEDICO_REGULADOR", r),
        fleet: people(&all, "OPERADOR_FROTA", f),
        incidents_per_call_taker: n,
        deadline: Duration::from_secs(var("DEADLINE_SECS", 300) as u64),
    };
    let baseline = driver::run(config(1, 2, 1, 10)).await;
    report(
        "baseline (1 call taker, 2 regulators, 1 fleet operator)",
        &baseline,
    );
    let shift = driver::run(config(takers, regulators, fleet, incidents)).await;
    report(
        &format!("shift ({takers} call takers, {regulators} regulators, {fleet} fleet operators)"),
        &shift,
    );
    println!();
    println!(
        "| screen | requests per screen | shown | p50 ms | p99 ms | baseline p99 ms | p99 ratio |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, s) in &shift.screens {
        let per = s.requests as f64 / s.times.len().max(1) as f64;
        let base_p99 = baseline.screens.get(name).map(|b| b.percentile(0.99));
        println!(
            "| {name} | {per:.0} | {} | {:.1} | {:.1} | {} | {} |",
            s.times.len(),
            ms(s.percentile(0.5)),
            ms(s.percentile(0.99)),
            base_p99
                .map(|b| format!("{:.1}", ms(b)))
                .unwrap_or("-".into()),
            base_p99
                .filter(|b| !b.is_zero())
                .map(|b| format!("{:.2}", ms(s.percentile(0.99)) / ms(b)))
                .unwrap_or("-".into()),
        );
    }
    if !shift.violations.is_empty() || !baseline.violations.is_empty() {
        std::process::exit(1);
    }
}
