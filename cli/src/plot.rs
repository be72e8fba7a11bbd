//! SVG plot of an evaluation: evidence recall (unit recall when the
//! dataset lists evidence units) against the budget K, one line per method,
//! with its 95 % bootstrap interval as a shaded band (`mempursuit eval
//! --plot FILE.svg`).
//!
//! Drawn with `plotters` (SVG backend only; text is written as SVG `<text>`
//! elements, so no system fonts are needed).

use plotters::prelude::*;

#[cfg(doc)]
use crate::eval::Metrics;
use crate::eval::{BudgetResult, EvalReport, Interval};

/// The plotted measure of one budget, and its interval.
fn measure(b: &BudgetResult, units: bool) -> (f64, Option<Interval>) {
    if units {
        (b.overall.unit_recall.unwrap_or(0.0), b.unit_recall_ci)
    } else {
        (b.overall.evidence_recall, b.recall_ci)
    }
}

/// The line colours, in method order (cycled).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// The plot of `report` as an SVG document (800 × 500): x = K (linear),
/// y = evidence recall in percent (unit recall, [`Metrics::unit_recall`],
/// when the report has units: [`EvalReport::has_units`]), one line with point markers per method
/// and, when the report has bootstrap intervals, the 95 % interval of the
/// recall as a band in the method's colour; the legend names the methods.
///
/// # Errors
/// A message when the report has no budgets or plotters fails to draw.
pub fn recall_svg(report: &EvalReport, title: &str) -> Result<String, String> {
    let (Some(&k_min), Some(&k_max)) = (report.ks.first(), report.ks.last()) else {
        return Err("plot: the report has no budgets".into());
    };
    let units = report.has_units();
    let mut lo = 100.0f64;
    let mut hi = 0.0f64;
    for m in &report.methods {
        for b in &m.budgets {
            let (r, ci) = measure(b, units);
            let r = 100.0 * r;
            let (l, h) = ci.map_or((r, r), |c| (100.0 * c.lo, 100.0 * c.hi));
            lo = lo.min(l);
            hi = hi.max(h);
        }
    }
    let y0 = ((lo - 5.0) / 5.0).floor().max(0.0) * 5.0;
    let y1 = (((hi + 5.0) / 5.0).ceil() * 5.0).min(100.0).max(y0 + 5.0);
    let x0 = k_min as f64 - 0.5;
    let x1 = (k_max as f64 + 0.5).max(x0 + 1.0);
    let err = |e: DrawingAreaErrorKind<std::io::Error>| format!("plot: {e}");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .x_labels(report.ks.len().max(2) * 2)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .x_desc(if report.tokenizer.is_some() {
                "budget in tokens"
            } else {
                "budget K"
            })
            .y_desc(if units {
                "unit recall (%)"
            } else {
                "evidence recall (%)"
            })
            .draw()
            .map_err(err)?;
        for (i, m) in report.methods.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = m
                .budgets
                .iter()
                .map(|b| (b.k as f64, 100.0 * measure(b, units).0))
                .collect();
            let band: Vec<(f64, f64)> =
                m.budgets
                    .iter()
                    .filter_map(|b| measure(b, units).1.map(|c| (b.k as f64, 100.0 * c.hi)))
                    .chain(
                        m.budgets.iter().rev().filter_map(|b| {
                            measure(b, units).1.map(|c| (b.k as f64, 100.0 * c.lo))
                        }),
                    )
                    .collect();
            if band.len() >= 4 {
                chart
                    .draw_series(std::iter::once(Polygon::new(band, colour.mix(0.15))))
                    .map_err(err)?;
            }
            chart
                .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
                .map_err(err)?
                .label(m.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))
                .map_err(err)?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}
