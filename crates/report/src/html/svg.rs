//! Drawing: axes ([`Scale`]), the multi-line SVG chart every line figure uses, and
//! thinning long series so that peaks survive. Knows nothing of fabrics.

use std::fmt::Write as _;

use super::esc;

/// Width of every chart's view box; text sizes are in the same units.
pub(super) const W: f64 = 640.0;

/// One series of a line chart.
pub(super) struct Line {
    pub label: String,
    pub colour: &'static str,
    pub pts: Vec<(f64, f64)>,
}

/// An axis: linear from 0, or log in decades.
pub(super) struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    pub ticks: Vec<f64>,
    pub step: f64,
}

impl Scale {
    /// 0 ..= a round number at or above `max`, with five to eight ticks of 1, 2, 2.5 or 5 × 10^k.
    pub(super) fn linear(max: f64) -> Scale {
        let max = if max > 0.0 && max.is_finite() { max } else { 1.0 };
        let raw = max / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let step = mag * [1.0, 2.0, 2.5, 5.0, 10.0].into_iter().find(|&m| raw <= m * mag * (1.0 + 1e-9)).unwrap_or(10.0);
        let n = (max / step - 1e-9).ceil().max(1.0) as usize;
        Scale { lo: 0.0, hi: n as f64 * step, log: false, ticks: (0..=n).map(|i| i as f64 * step).collect(), step }
    }

    /// Whole decades around `lo ..= hi` (both > 0).
    pub(super) fn log(lo: f64, hi: f64) -> Scale {
        let a = lo.log10().floor() as i32;
        let b = (hi.log10().ceil() as i32).max(a + 1);
        Scale { lo: 10f64.powi(a), hi: 10f64.powi(b), log: true, ticks: (a..=b).map(|k| 10f64.powi(k)).collect(), step: 0.0 }
    }

    /// Position of `v` on the axis, 0 ..= 1.
    pub(super) fn frac(&self, v: f64) -> f64 {
        let f = if self.log { (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()) } else { (v - self.lo) / (self.hi - self.lo) };
        f.clamp(0.0, 1.0)
    }

    /// The tick label of `v`.
    pub(super) fn label(&self, v: f64) -> String {
        if self.log {
            return if (1e-3..1e6).contains(&v) { trim(format!("{v:.3}")) } else { format!("{v:e}") };
        }
        // As many decimals as the step needs (0.25 → 2, 2.5 → 1, 200 → 0).
        let decimals = (0..6).find(|&d| (format!("{:.d$}", self.step).parse::<f64>().unwrap_or(0.0) - self.step).abs() < 1e-9 * self.step).unwrap_or(6);
        format!("{v:.decimals$}")
    }
}

/// A decimal without trailing zeros.
fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A multi-line chart in a `<figure>` with a legend. `step`: draw each line as a staircase
/// (a CDF).
#[allow(clippy::too_many_arguments)]
pub(super) fn line_chart(id: &str, class: &str, title: &str, xlab: &str, ylab: &str, x: &Scale, y: &Scale, lines: &[Line], step: bool, note: &str) -> String {
    const L: f64 = 66.0;
    const R: f64 = 26.0;
    const T: f64 = 34.0;
    const B: f64 = 46.0;
    const H: f64 = 300.0;
    let (pw, ph) = (W - L - R, H - T - B);
    let px = |v: f64| L + x.frac(v) * pw;
    let py = |v: f64| T + (1.0 - y.frac(v)) * ph;
    let n: usize = lines.iter().map(|l| l.pts.len()).sum();
    let mut s = format!("<figure class=\"fig {class}\" id=\"{id}\">\n");
    let _ = writeln!(
        s,
        "<svg class=\"chart\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}\" data-points=\"{n}\">\n<text class=\"title\" x=\"{L}\" y=\"20\">{t}</text>",
        t = esc(title)
    );
    for &v in &y.ticks {
        let yy = py(v);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{L}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            W - R,
            L - 6.0,
            yy + 4.0,
            y.label(v)
        );
    }
    for &v in &x.ticks {
        let xx = px(v);
        let _ = writeln!(
            s,
            "<line class=\"grid\" x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{T}\" y2=\"{:.1}\"/><text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            T + ph,
            T + ph + 16.0,
            x.label(v)
        );
    }
    let _ = writeln!(
        s,
        "<rect class=\"frame\" x=\"{L}\" y=\"{T}\" width=\"{pw}\" height=\"{ph}\"/>\n\
         <text class=\"axl\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}{}</text>\n\
         <text class=\"axl\" transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        L + pw / 2.0,
        H - 8.0,
        esc(xlab),
        if x.log { ", log scale" } else { "" },
        T + ph / 2.0,
        esc(ylab)
    );
    for (k, l) in lines.iter().enumerate() {
        let _ = write!(s, "<polyline data-s=\"{k}\" stroke=\"{}\" points=\"", l.colour);
        let mut prev: Option<f64> = step.then_some(0.0);
        for &(a, b) in &l.pts {
            if let Some(p) = prev {
                let _ = write!(s, "{:.1},{:.1} ", px(a), py(p));
                if step {
                    prev = Some(b);
                }
            }
            let _ = write!(s, "{:.1},{:.1} ", px(a), py(b));
        }
        s.pop();
        let _ = writeln!(s, "\"><title>{}</title></polyline>", esc(&l.label));
    }
    s.push_str("</svg>\n<ul class=\"legend\">");
    for (k, l) in lines.iter().enumerate() {
        let _ = write!(s, "<li data-s=\"{k}\"><span class=\"sw\" style=\"background:{}\"></span>{}</li>", l.colour, esc(&l.label));
    }
    s.push_str("</ul>\n");
    if !note.is_empty() {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(note));
    }
    s.push_str("</figure>\n");
    s
}

/// `pts` without the points in the middle of a horizontal run (the drawing is the same),
/// which keeps mostly-idle series small.
pub(super) fn drop_flat(pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let n = pts.len();
    let keep = |i: usize| i == 0 || i + 1 == n || pts[i - 1].1 != pts[i].1 || pts[i + 1].1 != pts[i].1;
    (0..n).filter(|&i| keep(i)).map(|i| pts[i]).collect()
}

/// At most `max` points: longer series are cut into `max / 2` buckets of consecutive
/// points and each keeps its lowest and highest point, in time order, so peaks and troughs
/// survive.
pub(super) fn downsample(pts: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if pts.len() <= max || max < 2 {
        return pts.to_vec();
    }
    let buckets = max / 2;
    let mut out = Vec::with_capacity(max);
    for b in 0..buckets {
        let s = &pts[b * pts.len() / buckets..(b + 1) * pts.len() / buckets];
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in s.iter().enumerate() {
            if p.1 < s[lo].1 {
                lo = i;
            }
            if p.1 > s[hi].1 {
                hi = i;
            }
        }
        out.push(s[lo.min(hi)]);
        if lo != hi {
            out.push(s[lo.max(hi)]);
        }
    }
    out
}

/// Unit for an axis of bytes whose top is `max`: B, KB or MB (powers of 10, as scenario
/// files write them), and its divisor.
pub(super) fn byte_unit(max: u64) -> (&'static str, f64) {
    match max {
        0..2_000 => ("B", 1.0),
        2_000..2_000_000 => ("KB", 1e3),
        _ => ("MB", 1e6),
    }
}

/// `s` cut to `n` characters, the last one an ellipsis when cut.
pub(super) fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n - 1).collect();
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::MAX_POINTS;

    #[test]
    fn downsampling_keeps_peaks_and_bounds() {
        let mut pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, (i % 7) as f64)).collect();
        pts[54_321].1 = 1e9;
        pts[12_345].1 = -5.0;
        let d = downsample(&pts, MAX_POINTS);
        assert!(d.len() <= MAX_POINTS);
        assert!(d.iter().any(|p| p.1 == 1e9) && d.iter().any(|p| p.1 == -5.0));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0), "time order kept");
        assert_eq!(downsample(&pts[..10], MAX_POINTS), pts[..10].to_vec());
    }

    #[test]
    fn flat_runs_keep_their_ends() {
        let pts = vec![(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 5.0), (4.0, 5.0), (5.0, 5.0), (6.0, 5.0)];
        assert_eq!(drop_flat(pts), vec![(0.0, 0.0), (2.0, 0.0), (3.0, 5.0), (6.0, 5.0)]);
    }

    #[test]
    fn scales_are_round() {
        let s = Scale::linear(1296.1);
        assert_eq!((s.hi, s.step), (1500.0, 250.0));
        assert_eq!(s.label(750.0), "750");
        let s = Scale::linear(0.9);
        assert_eq!(s.ticks.last(), Some(&1.0));
        assert_eq!(s.label(0.2), "0.2");
        let s = Scale::linear(14.0);
        assert_eq!((s.hi, s.step), (15.0, 2.5));
        assert_eq!(s.label(2.5), "2.5");
        assert_eq!(s.label(5.0), "5.0");
        let s = Scale::log(3.0, 4000.0);
        assert_eq!(s.ticks, vec![1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert!((s.frac(100.0) - 0.5).abs() < 1e-12);
    }
}
