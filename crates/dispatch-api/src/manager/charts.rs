//! The page's two charts, drawn by the server as SVG with plotters' SVG backend (no script,
//! no CDN): the distribution of response times against their targets, and the share within
//! target per hour of the day.

use plotters::prelude::*;

use crate::store::times::ResponseBar;

const WITHIN: RGBColor = RGBColor(22, 101, 52);
const OVER: RGBColor = RGBColor(185, 28, 28);
const NO_TARGET: RGBColor = RGBColor(156, 163, 175);
const SIZE: (u32, u32) = (640, 340);
/// The charts' text size as plotters takes it: it writes `font-size` 21 / 1.24, about 17 of
/// the SVG's own pixels, shown at about 15 px in the page's grid.
const TEXT_PX: u32 = 21;

fn text() -> TextStyle<'static> {
    ("sans-serif", TEXT_PX).into_font().color(&BLACK)
}

/// Labels the SVG for screen readers (plotters writes a bare `<svg>`).
fn labelled(svg: String, label: &str) -> String {
    let label = label
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;");
    svg.replacen(
        "<svg ",
        &format!("<svg role=\"img\" aria-label=\"{label}\" "),
        1,
    )
}

/// Responses per minute (the last bar: `cap` minutes or more), stacked within their target,
/// over it and without one, with a vertical line at each target (`targets`, in minutes).
pub fn distribution(bars: &[ResponseBar], cap: i32, targets: &[i32]) -> String {
    let mut svg = String::new();
    let drawn = draw_distribution(&mut svg, bars, cap, targets);
    if let Err(e) = drawn {
        tracing::warn!(error = %e, "reports: distribution chart not drawn");
        return String::new();
    }
    let total: i64 = bars.iter().map(|b| b.within + b.over + b.no_target).sum();
    let over: i64 = bars.iter().map(|b| b.over).sum();
    labelled(
        svg,
        &format!("Distribuição de {total} tempos-resposta por minuto; {over} acima da meta"),
    )
}

fn draw_distribution(
    svg: &mut String,
    bars: &[ResponseBar],
    cap: i32,
    targets: &[i32],
) -> Result<(), String> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let top = bars
        .iter()
        .map(|b| b.within + b.over + b.no_target)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut chart = ChartBuilder::on(&root)
        .margin(16)
        // Room for the last label, "1:00:00+", centred on the axis's end.
        .margin_right(44)
        .x_label_area_size(60)
        .y_label_area_size(70)
        .build_cartesian_2d(0..cap + 1, 0..top + top / 10 + 1)
        .map_err(|e| e.to_string())?;
    // Minutes read as every time of the page reads: h:mm:ss.
    let clock = |m: i32| super::format::clock(Some(f64::from(m) * 60.0));
    chart
        .configure_mesh()
        .disable_x_mesh()
        .label_style(text())
        .axis_desc_style(text())
        .x_labels(7)
        .x_desc("tempo do atendimento à chegada (h:mm:ss)")
        .y_desc("chamadas")
        .x_label_formatter(&|m| {
            if *m >= cap {
                format!("{}+", clock(cap))
            } else {
                clock(*m)
            }
        })
        .draw()
        .map_err(|e| e.to_string())?;
    let stacks = bars.iter().flat_map(|b| {
        let m = b.minute;
        [
            (m, 0, b.within, WITHIN),
            (m, b.within, b.within + b.over, OVER),
            (
                m,
                b.within + b.over,
                b.within + b.over + b.no_target,
                NO_TARGET,
            ),
        ]
    });
    chart
        .draw_series(
            stacks
                .filter(|(_, lo, hi, _)| hi > lo)
                .map(|(m, lo, hi, colour)| Rectangle::new([(m, lo), (m + 1, hi)], colour.filled())),
        )
        .map_err(|e| e.to_string())?;
    for t in targets.iter().filter(|t| **t <= cap) {
        chart
            .draw_series(LineSeries::new(
                [(*t, 0), (*t, top + top / 10)],
                BLACK.stroke_width(2),
            ))
            .map_err(|e| e.to_string())?;
    }
    root.present().map_err(|e| e.to_string())
}

/// The share within target of each hour (0..23, centre time); `None`: no measured response
/// with a target that hour.
pub fn hourly(shares: &[(u32, Option<f64>)]) -> String {
    let mut svg = String::new();
    if let Err(e) = draw_hourly(&mut svg, shares) {
        tracing::warn!(error = %e, "reports: hourly chart not drawn");
        return String::new();
    }
    labelled(svg, "Parcela dentro da meta por hora do dia, de 0 a 100%")
}

fn draw_hourly(svg: &mut String, shares: &[(u32, Option<f64>)]) -> Result<(), String> {
    let root = SVGBackend::with_string(svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .margin(16)
        .x_label_area_size(60)
        .y_label_area_size(90)
        .build_cartesian_2d(0u32..24u32, 0f64..100f64)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .label_style(text())
        .axis_desc_style(text())
        .x_labels(12)
        .y_labels(6)
        // The tables' format: 85,0%.
        .y_label_formatter(&|v| super::format::percent(Some(*v / 100.0)))
        .x_desc("hora do dia")
        .y_desc("dentro da meta")
        .draw()
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(shares.iter().filter_map(|(h, s)| {
            let pct = (*s)? * 100.0;
            let colour = if pct >= 90.0 { WITHIN } else { OVER };
            Some(Rectangle::new(
                [(*h, 0.0), (*h + 1, pct)],
                colour.mix(0.85).filled(),
            ))
        }))
        .map_err(|e| e.to_string())?;
    chart
        .draw_series(LineSeries::new(
            [(0, 90.0), (24, 90.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_charts_are_svg_with_a_bar_per_minute_and_hour() {
        let bars = [
            ResponseBar {
                minute: 3,
                within: 2,
                over: 0,
                no_target: 0,
            },
            ResponseBar {
                minute: 12,
                within: 1,
                over: 3,
                no_target: 1,
            },
        ];
        let svg = distribution(&bars, 60, &[10, 30, 60]);
        assert!(
            svg.starts_with("<svg role=\"img\" aria-label=\"Distribuição de 7"),
            "{svg}"
        );
        // Three filled stacks: minute 3 within, minute 12 within, over and without target.
        assert_eq!(svg.matches("fill=\"#166534\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("fill=\"#B91C1C\"").count(), 1, "{svg}");
        // The axis reads minutes as the tables read times.
        assert!(svg.contains("\n0:10:00\n"), "{svg}");
        assert!(svg.contains("\n1:00:00+\n"), "{svg}");
        let svg = hourly(&[(7, Some(0.95)), (8, Some(0.5)), (9, None)]);
        assert!(svg.contains("dentro da meta"));
        // The axis reads shares as the tables read them: 100,0%, never 100.0.
        assert!(svg.contains("\n100,0%\n"), "{svg}");
        assert!(!svg.contains("\n100.0\n"), "{svg}");
        assert!(svg.contains("font-size=\"16.93"), "{svg}");
        assert!(svg.contains("</svg>"));
    }
}
