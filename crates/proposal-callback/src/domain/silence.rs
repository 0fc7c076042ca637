//! Insurers watched for silence (docs/proposal-callback.md, "Silent insurers"): the rule
//! that says when an integration's silence is no longer its normal rhythm, and the emails
//! that tell the tenant's operator (pt-BR, `templates/email/silence.*`).
//!
//! Each integration learns its own rhythm: the gaps between consecutive callbacks over the
//! learning window, grouped by the hour of the weekday (in the tenant's time zone) each gap
//! began in. A
//! silence that began at that hour is compared with the p99 of those gaps: past
//! `max(k x p99, floor)` the integration is silent. An hour with fewer than
//! [`MIN_HOUR_GAPS`] gaps (a quiet night, a weekend) falls back to every gap of the window;
//! an integration with fewer than [`MIN_WINDOW_GAPS`] has no rhythm yet and is not judged.
//! Gaps that were themselves flagged silences are left out of the learning (an outage is not
//! a rhythm), so one outage does not teach the rule to tolerate the next.

use std::time::Duration;

use askama::Template;
use chrono::{DateTime, Datelike, Timelike, Utc};

use crate::domain::email::{Email, tidy};
use crate::domain::insurer::Insurer;
use crate::domain::zone::Tz;

/// `SILENCE_K` when unset: how many times the usual gap's p99 a silence must last.
pub const DEFAULT_K: f64 = 3.0;
/// `SILENCE_FLOOR` when unset: no silence shorter than this is flagged, however busy the
/// integration.
pub const DEFAULT_FLOOR: Duration = Duration::from_secs(30 * 60);
/// `SILENCE_LEARNING_WINDOW` when unset: four of each weekday.
pub const DEFAULT_LEARNING_WINDOW: Duration = Duration::from_secs(28 * 24 * 3600);
/// Fewer gaps than this began at an hour of a weekday in the window: that hour is judged by
/// every gap of the window instead (one a week, over the default four weeks).
pub const MIN_HOUR_GAPS: i64 = 4;
/// Fewer gaps than this in the whole window: the integration's rhythm is not known yet.
pub const MIN_WINDOW_GAPS: i64 = 20;

/// How a silence is judged (`SILENCE_K`, `SILENCE_FLOOR`, `SILENCE_LEARNING_WINDOW`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SilenceRule {
    pub k: f64,
    pub floor: Duration,
    pub learning_window: Duration,
}

impl Default for SilenceRule {
    fn default() -> Self {
        Self {
            k: DEFAULT_K,
            floor: DEFAULT_FLOOR,
            learning_window: DEFAULT_LEARNING_WINDOW,
        }
    }
}

/// An hour of a weekday, on the tenant's clock: the gaps of the same slot are read in the
/// same zone (`store::silences::gaps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Slot {
    /// 1 Monday .. 7 Sunday (ISO 8601, as PostgreSQL's `isodow`).
    pub weekday: u32,
    /// 0..=23.
    pub hour: u32,
    /// The tenant's time zone, which the hour is read in.
    pub zone: Tz,
}

impl Slot {
    pub fn of(t: DateTime<Utc>, zone: Tz) -> Self {
        let local = t.with_timezone(&zone);
        Self {
            weekday: local.weekday().number_from_monday(),
            hour: local.hour(),
            zone,
        }
    }
}

/// What an integration's history says about its gaps (read by the store).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gaps {
    /// Gaps that began at the silence's hour of its weekday, and their p99 (seconds).
    pub hour_count: i64,
    pub hour_p99: Option<f64>,
    /// Every gap of the window, and their p99 (seconds).
    pub window_count: i64,
    pub window_p99: Option<f64>,
}

common::text_enum! {
    /// Which gaps a threshold was learned from.
    pub enum LearnedFrom {
        /// Those that began at the same hour of the same weekday.
        Hour = "hour",
        /// Every gap of the learning window (too few at that hour).
        Window = "window",
    }
}

/// How long a silence may last before it is flagged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// Too few callbacks yet to know the integration's rhythm: not judged.
    Learning { gaps: i64 },
    Learned {
        /// `max(k x usual_gap, floor)`, in seconds.
        seconds: f64,
        /// The p99 of the gaps it was learned from, in seconds.
        usual_gap_seconds: f64,
        from: LearnedFrom,
        /// How many gaps that p99 was taken over.
        samples: i64,
    },
}

impl SilenceRule {
    /// Whether a silence that began at `since` has lasted past the floor at `now`: below it
    /// nothing is flagged, so its rhythm need not even be read.
    pub fn past_floor(&self, since: DateTime<Utc>, now: DateTime<Utc>) -> bool {
        seconds_between(since, now) > self.floor.as_secs_f64()
    }

    /// The threshold for a silence, from the gaps of its hour, else of the window.
    pub fn threshold(&self, gaps: &Gaps) -> Threshold {
        let (usual, from, samples) = match (gaps.hour_count, gaps.hour_p99, gaps.window_p99) {
            (n, Some(p99), _) if n >= MIN_HOUR_GAPS => (p99, LearnedFrom::Hour, n),
            (_, _, Some(p99)) if gaps.window_count >= MIN_WINDOW_GAPS => {
                (p99, LearnedFrom::Window, gaps.window_count)
            }
            _ => {
                return Threshold::Learning {
                    gaps: gaps.window_count,
                };
            }
        };
        let usual = usual.max(0.0);
        Threshold::Learned {
            seconds: (self.k * usual).max(self.floor.as_secs_f64()),
            usual_gap_seconds: usual,
            from,
            samples,
        }
    }
}

impl Threshold {
    /// Whether a silence that began at `since` has passed this threshold at `now` (strictly:
    /// at exactly the threshold it has not).
    pub fn is_passed(&self, since: DateTime<Utc>, now: DateTime<Utc>) -> bool {
        match self {
            Threshold::Learning { .. } => false,
            Threshold::Learned { seconds, .. } => seconds_between(since, now) > *seconds,
        }
    }
}

fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6
}

/// A length of time as an operator reads it, rounded down: `45 s`, `12 min`, `3 h 10 min`,
/// `2 d 4 h`.
pub fn duration_text(seconds: f64) -> String {
    let s = seconds.max(0.0) as u64;
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

/// A time as the operator's email shows it: `24/11/2026 14:05`, in the tenant's zone.
pub fn time_text(t: DateTime<Utc>, zone: Tz) -> String {
    t.with_timezone(&zone).format("%d/%m/%Y %H:%M").to_string()
}

/// Which integration an operator's email is about, and its episode.
#[derive(Debug, Clone, Copy)]
pub struct SilenceNotice<'a> {
    /// The tenant's name.
    pub tenant_name: &'a str,
    pub insurer: Insurer,
    /// `homologation` or `production`.
    pub environment: &'a str,
    /// When the last callback before the silence arrived.
    pub since: DateTime<Utc>,
    /// When the silence was flagged.
    pub flagged_at: DateTime<Utc>,
    pub threshold_seconds: f64,
    pub usual_gap_seconds: f64,
    pub from: LearnedFrom,
    /// The console's integrations page (`CALLBACK_BASE_URL` + `/admin/integracao`).
    pub console_url: &'a str,
    /// The tenant's time zone, which the email's times are in.
    pub zone: Tz,
}

/// What the templates read.
struct Context<'a> {
    n: &'a SilenceNotice<'a>,
    insurer: &'a str,
    environment: &'static str,
    since: String,
    flagged_at: String,
    silent_for: String,
    threshold: String,
    usual_gap: String,
    /// "nesse dia da semana e horário" or "nas últimas semanas".
    learned_where: &'static str,
    /// Once callbacks are back: when the first arrived and how long the silence lasted.
    resumed: Option<(String, String)>,
    /// Which clock the times are on (`horário de Brasília`, `fuso America/Manaus`).
    zone: String,
}

#[derive(Template)]
#[template(path = "email/silence.txt")]
struct TextBody<'a> {
    t: &'a Context<'a>,
}

#[derive(Template)]
#[template(path = "email/silence.html")]
struct HtmlBody<'a> {
    t: &'a Context<'a>,
    subject: &'a str,
}

fn context<'a>(n: &'a SilenceNotice<'a>, resumed_at: Option<DateTime<Utc>>) -> Context<'a> {
    Context {
        n,
        insurer: n.insurer.display_name(),
        environment: match n.environment {
            "production" => "Produção",
            _ => "Homologação",
        },
        since: time_text(n.since, n.zone),
        flagged_at: time_text(n.flagged_at, n.zone),
        silent_for: duration_text(seconds_between(n.since, n.flagged_at)),
        threshold: duration_text(n.threshold_seconds),
        usual_gap: duration_text(n.usual_gap_seconds),
        learned_where: match n.from {
            LearnedFrom::Hour => "nesse dia da semana e horário",
            LearnedFrom::Window => "nas últimas semanas",
        },
        zone: crate::domain::zone::label(n.zone),
        resumed: resumed_at.map(|at| {
            (
                time_text(at, n.zone),
                duration_text(seconds_between(n.since, at)),
            )
        }),
    }
}

fn render(t: &Context<'_>, subject: String) -> Result<Email, askama::Error> {
    let text = tidy(&TextBody { t }.render()?);
    let html = HtmlBody {
        t,
        subject: &subject,
    }
    .render()?;
    Ok(Email {
        subject,
        text,
        html,
    })
}

/// The email telling the operator that `n`'s integration went silent.
pub fn silent_email(n: &SilenceNotice<'_>) -> Result<Email, askama::Error> {
    let t = context(n, None);
    let subject = format!(
        "{} ({}) sem callbacks desde {} | {}",
        t.insurer, t.environment, t.since, n.tenant_name
    );
    render(&t, subject)
}

/// The email telling the operator that callbacks came back at `resumed_at`.
pub fn resumed_email(
    n: &SilenceNotice<'_>,
    resumed_at: DateTime<Utc>,
) -> Result<Email, askama::Error> {
    let t = context(n, Some(resumed_at));
    let subject = format!(
        "{} ({}) voltou a enviar callbacks | {}",
        t.insurer, t.environment, n.tenant_name
    );
    render(&t, subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn slots_are_the_tenants_local_hours_of_iso_weekdays() {
        let sao_paulo = chrono_tz::America::Sao_Paulo;
        let rio_branco = chrono_tz::America::Rio_Branco;
        let slot = |weekday, hour, zone| Slot {
            weekday,
            hour,
            zone,
        };
        // 2026-11-23 is a Monday; 02:30 UTC is still Sunday 23:30 in Brasília, 21:30 in Rio
        // Branco.
        assert_eq!(
            Slot::of(at("2026-11-23T02:30:00Z"), sao_paulo),
            slot(7, 23, sao_paulo)
        );
        assert_eq!(
            Slot::of(at("2026-11-23T02:30:00Z"), rio_branco),
            slot(7, 21, rio_branco)
        );
        assert_eq!(
            Slot::of(at("2026-11-23T13:05:00Z"), sao_paulo),
            slot(1, 10, sao_paulo)
        );
        assert_eq!(
            Slot::of(at("2026-11-23T13:05:00Z"), chrono_tz::America::Manaus),
            slot(1, 9, chrono_tz::America::Manaus)
        );
        // Under the daylight saving time São Paulo kept until 2019: UTC-02:00.
        assert_eq!(
            Slot::of(at("2018-12-03T13:05:00Z"), sao_paulo),
            slot(1, 11, sao_paulo)
        );
    }

    #[test]
    fn the_hours_gaps_decide_when_there_are_enough_else_the_windows_else_none() {
        let rule = SilenceRule::default();
        let hour = Gaps {
            hour_count: 4,
            hour_p99: Some(600.0),
            window_count: 500,
            window_p99: Some(20_000.0),
        };
        assert_eq!(
            rule.threshold(&hour),
            Threshold::Learned {
                seconds: 1800.0,
                usual_gap_seconds: 600.0,
                from: LearnedFrom::Hour,
                samples: 4
            }
        );
        let sparse = Gaps {
            hour_count: 3,
            ..hour
        };
        assert_eq!(
            rule.threshold(&sparse),
            Threshold::Learned {
                seconds: 60_000.0,
                usual_gap_seconds: 20_000.0,
                from: LearnedFrom::Window,
                samples: 500
            }
        );
        let young = Gaps {
            hour_count: 0,
            hour_p99: None,
            window_count: 19,
            window_p99: Some(60.0),
        };
        assert_eq!(rule.threshold(&young), Threshold::Learning { gaps: 19 });
    }

    #[test]
    fn a_busy_rhythm_still_waits_for_the_floor_and_the_threshold_is_strict() {
        let rule = SilenceRule {
            k: 3.0,
            floor: Duration::from_secs(1200),
            learning_window: DEFAULT_LEARNING_WINDOW,
        };
        let busy = rule.threshold(&Gaps {
            hour_count: 50,
            hour_p99: Some(30.0),
            window_count: 5000,
            window_p99: Some(40.0),
        });
        let Threshold::Learned { seconds, .. } = busy else {
            panic!("{busy:?}")
        };
        assert_eq!(seconds, 1200.0, "3 x 30 s is below the floor");
        let since = at("2026-11-23T13:00:00Z");
        assert!(!busy.is_passed(since, since + chrono::Duration::seconds(1200)));
        assert!(busy.is_passed(since, since + chrono::Duration::seconds(1201)));
        assert!(!rule.past_floor(since, since + chrono::Duration::seconds(1200)));
        assert!(rule.past_floor(since, since + chrono::Duration::seconds(1201)));
        assert!(
            !Threshold::Learning { gaps: 3 }.is_passed(since, since + chrono::Duration::days(30))
        );
    }

    #[test]
    fn durations_read_as_an_operator_says_them() {
        assert_eq!(duration_text(45.9), "45 s");
        assert_eq!(duration_text(600.0), "10 min");
        assert_eq!(duration_text(3600.0), "1 h");
        assert_eq!(duration_text(11_400.0), "3 h 10 min");
        assert_eq!(
            duration_text(86_400.0 * 2.0 + 4.0 * 3600.0 + 59.0),
            "2 d 4 h"
        );
        assert_eq!(duration_text(86_400.0), "1 d");
    }

    fn notice() -> SilenceNotice<'static> {
        SilenceNotice {
            tenant_name: "Imobiliária Demo A",
            insurer: Insurer::Porto,
            environment: "homologation",
            since: at("2026-11-23T17:05:00Z"),
            flagged_at: at("2026-11-23T17:36:00Z"),
            threshold_seconds: 1800.0,
            usual_gap_seconds: 600.0,
            from: LearnedFrom::Hour,
            console_url: "https://callbacks.example.com/admin/integracao",
            zone: chrono_tz::America::Sao_Paulo,
        }
    }

    #[test]
    fn the_silence_email_says_since_when_how_long_and_what_is_usual() {
        let e = silent_email(&notice()).unwrap();
        assert_eq!(
            e.subject,
            "Porto Seguro (Homologação) sem callbacks desde 23/11/2026 14:05 | Imobiliária Demo A"
        );
        assert_eq!(
            e.text,
            "Olá,\n\
             \n\
             A Porto Seguro não envia callbacks para a integração de Imobiliária Demo A \
             (ambiente Homologação) desde 23/11/2026 14:05 (horário de Brasília): 31 min sem \
             nenhum callback até 23/11/2026 14:36.\n\
             \n\
             Pelo histórico desta integração, nesse dia da semana e horário o intervalo entre \
             dois callbacks fica abaixo de 10 min em 99% das vezes. O alerta vem depois de \
             30 min de silêncio.\n\
             \n\
             Enquanto a seguradora não enviar callbacks, propostas podem ficar paradas na fila \
             esperando o resultado. Confirme com a seguradora se o envio está funcionando.\n\
             \n\
             Outro e-mail avisa quando os callbacks voltarem. Console de integrações: \
             https://callbacks.example.com/admin/integracao\n\
             \n\
             Mensagem automática de proposal-callback para o operador de Imobiliária Demo A.\n"
        );
        assert!(
            e.html.contains("<strong>Porto Seguro</strong>"),
            "{}",
            e.html
        );
        assert!(e.html.contains("31 min"), "{}", e.html);
    }

    #[test]
    fn the_resumed_email_says_when_callbacks_came_back_and_how_long_the_silence_was() {
        let e = resumed_email(&notice(), at("2026-11-23T18:02:30Z")).unwrap();
        assert_eq!(
            e.subject,
            "Porto Seguro (Homologação) voltou a enviar callbacks | Imobiliária Demo A"
        );
        assert_eq!(
            e.text,
            "Olá,\n\
             \n\
             A Porto Seguro voltou a enviar callbacks para a integração de Imobiliária Demo A \
             (ambiente Homologação): o primeiro chegou em 23/11/2026 15:02 (horário de \
             Brasília). O silêncio durou 57 min, desde 23/11/2026 14:05.\n\
             \n\
             Os callbacks que a seguradora reenviar são aplicados como sempre, cada um uma vez. \
             Propostas que ficaram sem resultado no período podem ser conferidas no console de \
             integrações: https://callbacks.example.com/admin/integracao\n\
             \n\
             Mensagem automática de proposal-callback para o operador de Imobiliária Demo A.\n"
        );
    }

    #[test]
    fn markup_in_the_tenant_name_is_text_in_the_html_part() {
        let mut n = notice();
        n.tenant_name = "<b>Demo</b>";
        let e = silent_email(&n).unwrap();
        assert!(!e.html.contains("<b>Demo</b>"));
        assert!(e.html.contains("&#60;b&#62;Demo") || e.html.contains("&lt;b&gt;Demo"));
    }
}
