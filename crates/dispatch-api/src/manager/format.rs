//! How the manager's page writes numbers, the same in its tables and its charts
//! (docs/dispatch-routes.md, "The manager's page"): every duration `h:mm:ss`, shares `85,0%`,
//! no percentile of too few measures.

/// Seconds as the page shows every time it shows: `h:mm:ss` (one format, named in the
/// page's legend); `—` for none.
pub fn clock(seconds: Option<f64>) -> String {
    let Some(s) = seconds else {
        return "—".into();
    };
    let s = s.round() as i64;
    format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}

/// Fewer measures than this give no p50 or p90 on the page (`—`): the percentile of one or
/// two holds is that hold, not a tendency. The count and the maximum are shown beside.
pub const MIN_FOR_PERCENTILES: i64 = 5;

/// A percentile of `count` measures as the page shows it: `—` under
/// [`MIN_FOR_PERCENTILES`].
pub fn percentile(seconds: Option<f64>, count: i64) -> String {
    if count < MIN_FOR_PERCENTILES {
        return "—".into();
    }
    clock(seconds)
}

/// A share as the page shows it: `87,5%` (one decimal, a comma), `—` for none.
pub fn percent(share: Option<f64>) -> String {
    match share {
        Some(s) => format!("{:.1}%", s * 100.0).replace('.', ","),
        None => "—".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_shares_read_as_a_brazilian_manager_reads_them() {
        assert_eq!(clock(Some(700.0)), "0:11:40");
        assert_eq!(clock(Some(59.6)), "0:01:00");
        assert_eq!(clock(Some(3725.0)), "1:02:05");
        assert_eq!(clock(None), "—");
        assert_eq!(percentile(Some(700.0), 4), "—");
        assert_eq!(percentile(Some(700.0), 5), "0:11:40");
        assert_eq!(percent(Some(0.875)), "87,5%");
        assert_eq!(percent(None), "—");
    }
}
