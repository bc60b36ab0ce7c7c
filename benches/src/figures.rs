//! Figures as the benchmark computes and writes them: quantiles and medians of what was
//! measured, numbers with their thousands, and the verdict of a goal. It uses nothing of
//! the benchmark's own, so that every part and the report can.

/// The `p` quantile of `sorted_us` (microseconds, ascending), in ms: the value at rank
/// ⌈p × n⌉; NaN when there is none.
pub fn percentile_ms(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted_us.len() as f64 * p).ceil() as usize).clamp(1, sorted_us.len()) - 1;
    sorted_us[i] as f64 / 1000.0
}

/// The median (the mean of the middle two for an even count); NaN for none.
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Whether a goal is met: `PASS` or `FAIL`, or `-` at the tiny scale, whose figures
/// judge nothing.
pub fn verdict(judged: bool, pass: bool) -> &'static str {
    match (judged, pass) {
        (false, _) => "-",
        (true, true) => "PASS",
        (true, false) => "FAIL",
    }
}

/// `12,345`.
pub fn thousands(n: f64) -> String {
    if !n.is_finite() {
        return "-".into();
    }
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0.0 {
        out.insert(0, '-');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_thousands() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median([]).is_nan());
        assert_eq!(thousands(1_234_567.4), "1,234,567");
        assert_eq!(thousands(999.0), "999");
    }
}
