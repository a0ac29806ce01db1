//! The sweep's SVG line plot, drawn from the CSV's rows alone (so `merge` draws the same
//! bytes): x = the first parameter's values (a numeric axis when they are increasing
//! numbers), y = the metric; one line per fabric and combination of the other parameters;
//! a fabric run once as a dashed horizontal reference line; the legend right of the plot.
//!
//! Left out: interactivity and any styling beyond a fixed palette.

use std::fmt::Write as _;

use super::csv_file::{Meta, Row};
use super::fabrics::{Fabric, Mode};

const PALETTE: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A step of 1, 2, 2.5 or 5 × 10^k giving about `n` intervals over `range`.
fn nice_step(range: f64, n: f64) -> f64 {
    let raw = (range / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

fn tick_label(v: f64, step: f64) -> String {
    let d = (0..7).find(|&d| ((step * 10f64.powi(d)).round() - step * 10f64.powi(d)).abs() < 1e-6).unwrap_or(6) as usize;
    format!("{v:.d$}")
}

/// A curve: legend text, colour, dashed, and points (x position, y; `None`: a gap).
struct Series {
    label: String,
    color: &'static str,
    dashed: bool,
    class: &'static str,
    points: Vec<(usize, Option<f64>)>,
}

/// A fabric's single run: its fabric and its y (`None`: no value).
type Reference = (Fabric, Option<f64>);

/// A legend entry: text, colour, dashed, with a marker.
type LegendEntry = (String, &'static str, bool, bool);

/// The SVG line plot: x = the first parameter's values, y = the metric; a line per
/// fabric and combination of the other parameters; a fabric run once as a dashed
/// horizontal reference line.
pub(super) fn plot(meta: &Meta, rows: &[Row]) -> String {
    let xs = x_values(rows);
    let (series, refs) = series(meta, rows, &xs);
    let fr = Frame::new(&xs, &series, &refs);
    let mut s = String::new();
    titles(&mut s, meta, &fr);
    axes(&mut s, meta, &fr, &xs);
    let mut legend: Vec<LegendEntry> = vec![];
    reference_lines(&mut s, &fr, &refs, &mut legend);
    curves(&mut s, meta, &fr, &xs, &series, &mut legend);
    legend_box(&mut s, &fr, &legend);
    let _ = writeln!(s, "</svg>");
    s
}

/// The first parameter's values in variant order.
fn x_values(rows: &[Row]) -> Vec<String> {
    let mut xs: Vec<String> = vec![];
    for r in rows.iter().filter(|r| r.variant.is_some()) {
        if !xs.contains(&r.values[0]) {
            xs.push(r.values[0].clone());
        }
    }
    xs
}

/// A series per (fabric, other parameters' values), and the fabrics' single runs.
fn series(meta: &Meta, rows: &[Row], xs: &[String]) -> (Vec<Series>, Vec<Reference>) {
    let col = meta.column(meta.metric.column);
    let y_of = |r: &Row| r.cells[col].parse::<f64>().ok();
    let mut series: Vec<Series> = vec![];
    let mut combos: Vec<String> = vec![];
    let mut refs: Vec<Reference> = vec![];
    for r in rows {
        let Some(_) = r.variant else {
            refs.push((r.fabric, y_of(r)));
            continue;
        };
        let rest = meta.params[1..].iter().zip(&r.values[1..]).map(|(p, v)| format!("{p}={v}")).collect::<Vec<_>>().join(", ");
        let ci = combos.iter().position(|c| *c == rest).unwrap_or_else(|| {
            combos.push(rest.clone());
            combos.len() - 1
        });
        let label = if rest.is_empty() { r.fabric.title().to_string() } else { format!("{} {rest}", r.fabric.title()) };
        let x = xs.iter().position(|x| *x == r.values[0]).expect("collected above");
        match series.iter_mut().find(|s| s.label == label) {
            Some(s) => s.points.push((x, y_of(r))),
            None => series.push(Series {
                label,
                color: PALETTE[ci % PALETTE.len()],
                dashed: r.fabric == Fabric::Infiniband,
                class: r.fabric.key(),
                points: vec![(x, y_of(r))],
            }),
        }
    }
    if combos.len() == 1 {
        for s in series.iter_mut().filter(|s| s.class == "infiniband") {
            s.color = "#ff7f0e";
        }
    }
    (series, refs)
}

/// The canvas, the plot area and the scales of both axes.
struct Frame {
    /// Plot area: left, right, top, bottom.
    l: f64,
    r: f64,
    t: f64,
    b: f64,
    /// Canvas width and height.
    w: f64,
    h: f64,
    /// The y axis: from, to, tick step.
    lo: f64,
    hi: f64,
    step: f64,
    /// The x values as numbers when all are and they increase (a numeric x axis).
    numeric: Option<Vec<f64>>,
    /// How many x values.
    nx: usize,
}

impl Frame {
    fn new(xs: &[String], series: &[Series], refs: &[Reference]) -> Frame {
        let numeric: Option<Vec<f64>> =
            xs.iter().map(|x| x.parse::<f64>().ok()).collect::<Option<Vec<_>>>().filter(|v| v.len() >= 2 && v.windows(2).all(|w| w[0] < w[1]));
        let all_y: Vec<f64> = series.iter().flat_map(|s| s.points.iter().filter_map(|p| p.1)).chain(refs.iter().filter_map(|r| r.1)).collect();
        let (mut lo, mut hi) = all_y.iter().fold((0f64, 0f64), |(a, b), &y| (a.min(y), b.max(y)));
        if hi - lo <= 0.0 {
            hi = lo + 1.0;
        }
        let step = nice_step(hi - lo, 5.0);
        lo = (lo / step).floor() * step;
        hi = (hi / step).ceil() * step;
        let (l, r, t, b) = (84.0, 560.0, 58.0, 380.0);
        // Room right of the plot for the longest legend entry (about 6.3 px a character).
        let longest = series.iter().map(|s| s.label.chars().count()).chain(refs.iter().map(|(f, _)| f.title().len() + 24)).max().unwrap_or(0);
        let (w, h) = ((r + 64.0 + 6.3 * longest as f64).max(780.0).round(), 440.0);
        Frame { l, r, t, b, w, h, lo, hi, step, numeric, nx: xs.len() }
    }

    /// The x position of the `i`th x value.
    fn sx(&self, i: usize) -> f64 {
        let (l, r) = (self.l, self.r);
        match &self.numeric {
            Some(v) => l + 20.0 + (v[i] - v[0]) / (v[v.len() - 1] - v[0]) * (r - l - 40.0),
            None if self.nx <= 1 => (l + r) / 2.0,
            None => l + 20.0 + i as f64 / (self.nx - 1) as f64 * (r - l - 40.0),
        }
    }

    /// The y position of `y`.
    fn sy(&self, y: f64) -> f64 {
        self.b - (y - self.lo) / (self.hi - self.lo) * (self.b - self.t)
    }
}

/// The SVG's opening, the background, the title and the subtitle (how the fabrics ran).
fn titles(s: &mut String, meta: &Meta, fr: &Frame) {
    let (w, h) = (fr.w, fr.h);
    let _ =
        writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica, Arial, sans-serif">"#);
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let title = format!("{}: {} by {}", meta.scenario, meta.metric.label, meta.params.join(" × "));
    let _ = writeln!(s, r#"<text x="{}" y="24" font-size="15" font-weight="bold" text-anchor="middle">{}</text>"#, w / 2.0, esc(&title));
    let sub = match (meta.mode(Fabric::Roce), meta.mode(Fabric::Infiniband)) {
        (Mode::PerVariant, Mode::Once) => "lossless by configuration: RoCEv2 per setting, InfiniBand as the reference",
        (Mode::PerVariant, Mode::PerVariant) => "RoCEv2 (solid) and InfiniBand (dashed) per setting",
        (Mode::PerVariant, Mode::Off) => "RoCEv2 per setting (no InfiniBand side)",
        _ => "per setting",
    };
    let _ = writeln!(s, r##"<text x="{}" y="42" font-size="12" fill="#555" text-anchor="middle">{}</text>"##, w / 2.0, esc(sub));
}

/// The grid with the y ticks, the plot area's frame, the x ticks (the values as given) and
/// both axis labels.
fn axes(s: &mut String, meta: &Meta, fr: &Frame, xs: &[String]) {
    let (l, r, t, b) = (fr.l, fr.r, fr.t, fr.b);
    let (lo, hi, step) = (fr.lo, fr.hi, fr.step);
    // Grid and y ticks.
    let n_ticks = ((hi - lo) / step).round() as usize;
    for k in 0..=n_ticks {
        let v = lo + k as f64 * step;
        let y = fr.sy(v);
        let _ = writeln!(s, r##"<line x1="{l}" y1="{y:.1}" x2="{r}" y2="{y:.1}" stroke="#e4e4e4"/>"##);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"#, l - 6.0, y + 4.0, tick_label(v, step));
    }
    let _ = writeln!(s, r##"<rect x="{l}" y="{t}" width="{}" height="{}" fill="none" stroke="#333"/>"##, r - l, b - t);
    // x ticks: the values as given.
    let rotate = xs.len() > 8 || xs.iter().map(|x| x.chars().count()).sum::<usize>() > 60;
    for (i, x) in xs.iter().enumerate() {
        let px = fr.sx(i);
        let _ = writeln!(s, r##"<line x1="{px:.1}" y1="{b}" x2="{px:.1}" y2="{}" stroke="#333"/>"##, b + 5.0);
        if rotate {
            let _ = writeln!(
                s,
                r#"<text x="{px:.1}" y="{}" font-size="11" text-anchor="end" transform="rotate(-35 {px:.1} {})">{}</text>"#,
                b + 16.0,
                b + 16.0,
                esc(x)
            );
        } else {
            let _ = writeln!(s, r#"<text x="{px:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#, b + 18.0, esc(x));
        }
    }
    let _ = writeln!(s, r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#, (l + r) / 2.0, b + 46.0, esc(&meta.params[0]));
    let _ = writeln!(
        s,
        r#"<text x="18" y="{0}" font-size="12" text-anchor="middle" transform="rotate(-90 18 {0})">{1}</text>"#,
        (t + b) / 2.0,
        esc(meta.metric.label)
    );
}

/// The fabrics' single runs as dashed horizontal lines, and their legend entries.
fn reference_lines(s: &mut String, fr: &Frame, refs: &[Reference], legend: &mut Vec<LegendEntry>) {
    let (l, r) = (fr.l, fr.r);
    for (f, y) in refs {
        let label = format!("{} (reference)", f.title());
        if let Some(y) = y {
            let py = fr.sy(*y);
            let _ = writeln!(
                s,
                r##"<line class="{} reference" x1="{l}" y1="{py:.1}" x2="{r}" y2="{py:.1}" stroke="#444" stroke-width="2" stroke-dasharray="7 5"><title>{}: {}</title></line>"##,
                f.key(),
                esc(&label),
                tick_label(*y, 0.001)
            );
        }
        legend.push((if y.is_some() { label } else { format!("{} (reference: no value)", f.title()) }, "#444", true, false));
    }
}

/// Each series as polylines (a missing value breaks the line) with a marker per point, and
/// their legend entries.
fn curves(s: &mut String, meta: &Meta, fr: &Frame, xs: &[String], series: &[Series], legend: &mut Vec<LegendEntry>) {
    for se in series {
        let dash = if se.dashed { r#" stroke-dasharray="7 5""# } else { "" };
        let mut seg: Vec<String> = vec![];
        let flush = |seg: &mut Vec<String>, s: &mut String| {
            if !seg.is_empty() {
                let _ = writeln!(s, r#"<polyline class="{}" fill="none" stroke="{}" stroke-width="2"{dash} points="{}"/>"#, se.class, se.color, seg.join(" "));
                seg.clear();
            }
        };
        for &(x, y) in &se.points {
            match y {
                Some(y) => seg.push(format!("{:.1},{:.1}", fr.sx(x), fr.sy(y))),
                None => flush(&mut seg, s),
            }
        }
        flush(&mut seg, s);
        for &(x, y) in &se.points {
            if let Some(y) = y {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{} {}={}: {}</title></circle>"#,
                    fr.sx(x),
                    fr.sy(y),
                    se.color,
                    esc(&se.label),
                    esc(&meta.params[0]),
                    esc(&xs[x]),
                    tick_label(y, 0.001)
                );
            }
        }
        legend.push((se.label.clone(), se.color, se.dashed, true));
    }
}

/// The legend, right of the plot.
fn legend_box(s: &mut String, fr: &Frame, legend: &[LegendEntry]) {
    let (r, t) = (fr.r, fr.t);
    // Legend, right of the plot.
    for (i, (label, color, dashed, marker)) in legend.iter().enumerate() {
        let y = t + 10.0 + i as f64 * 20.0;
        let dash = if *dashed { r#" stroke-dasharray="7 5""# } else { "" };
        let _ = writeln!(s, r#"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="{color}" stroke-width="2"{dash}/>"#, r + 16.0, r + 46.0);
        if *marker {
            let _ = writeln!(s, r#"<circle cx="{}" cy="{y:.1}" r="3.5" fill="{color}"/>"#, r + 31.0);
        }
        let _ = writeln!(s, r#"<text x="{}" y="{:.1}" font-size="11">{}</text>"#, r + 52.0, y + 4.0, esc(label));
    }
}
