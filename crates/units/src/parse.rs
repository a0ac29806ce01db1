//! Exact parsing of `<decimal><unit>` strings into integer base units.

#![allow(non_snake_case, non_upper_case_globals)]

/// Why a quantity string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("`{0}` has no unit")]
    NoUnit(String),
    #[error("`{input}` has unknown unit `{unit}` (known: {known})")]
    UnknownUnit { input: String, unit: String, known: &'static str },
    #[error("`{0}` is not a non-negative decimal number")]
    BadNumber(String),
    #[error("`{0}` is not a whole number of {1}")]
    NotIntegral(String, &'static str),
    #[error("`{0}` is too large")]
    Overflow(String),
}

/// Splits `"2.5us"` into (`"2.5"`, `"us"`), trimming spaces between.
fn split(s: &str) -> Result<(&str, &str), ParseError> {
    let s = s.trim();
    let idx = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).ok_or_else(|| ParseError::NoUnit(s.to_string()))?;
    let (num, unit) = s.split_at(idx);
    if num.is_empty() {
        return Err(ParseError::BadNumber(s.to_string()));
    }
    Ok((num, unit.trim()))
}

/// Parses decimal `num` times `scale` exactly; errors if the product is fractional.
fn scaled(input: &str, num: &str, scale: u64, base: &'static str) -> Result<u64, ParseError> {
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(ParseError::BadNumber(input.to_string()));
    }
    let bad = || ParseError::BadNumber(input.to_string());
    let over = || ParseError::Overflow(input.to_string());
    let int_v: u128 = if int.is_empty() { 0 } else { int.parse().map_err(|_| bad())? };
    let frac_v: u128 = if frac.is_empty() { 0 } else { frac.parse().map_err(|_| bad())? };
    let frac_den: u128 = 10u128.checked_pow(frac.len() as u32).ok_or_else(over)?;
    let scale = scale as u128;
    let whole = int_v.checked_mul(scale).ok_or_else(over)?;
    let fnum = frac_v.checked_mul(scale).ok_or_else(over)?;
    if fnum % frac_den != 0 {
        return Err(ParseError::NotIntegral(input.to_string(), base));
    }
    let total = whole.checked_add(fnum / frac_den).ok_or_else(over)?;
    u64::try_from(total).map_err(|_| over())
}

fn lookup(input: &str, table: &[(&str, u64)], known: &'static str, base: &'static str) -> Result<u64, ParseError> {
    let (num, unit) = split(input)?;
    let scale = table.iter().find(|(u, _)| *u == unit).map(|(_, s)| *s).ok_or_else(|| ParseError::UnknownUnit {
        input: input.to_string(),
        unit: unit.to_string(),
        known,
    })?;
    scaled(input, num, scale, base)
}

pub(crate) fn SimDuration(s: &str) -> Result<u64, ParseError> {
    lookup(
        s,
        &[("ps", 1), ("ns", 1_000), ("us", 1_000_000), ("µs", 1_000_000), ("ms", 1_000_000_000), ("s", 1_000_000_000_000)],
        "ps, ns, us, ms, s",
        "picoseconds",
    )
}

pub(crate) fn Bytes(s: &str) -> Result<u64, ParseError> {
    lookup(
        s,
        &[
            ("B", 1),
            ("KB", 1_000),
            ("MB", 1_000_000),
            ("GB", 1_000_000_000),
            ("TB", 1_000_000_000_000),
            ("KiB", 1 << 10),
            ("MiB", 1 << 20),
            ("GiB", 1 << 30),
            ("TiB", 1 << 40),
        ],
        "B, KB, MB, GB, TB (powers of 10), KiB, MiB, GiB, TiB (powers of 2)",
        "bytes",
    )
}

pub(crate) fn BitRate(s: &str) -> Result<u64, ParseError> {
    lookup(
        s,
        &[("bps", 1), ("Kbps", 1_000), ("Mbps", 1_000_000), ("Gbps", 1_000_000_000), ("Tbps", 1_000_000_000_000)],
        "bps, Kbps, Mbps, Gbps, Tbps (powers of 10)",
        "bit/s",
    )
}

pub(crate) fn Length(s: &str) -> Result<u64, ParseError> {
    lookup(s, &[("mm", 1), ("cm", 10), ("m", 1000), ("km", 1_000_000)], "mm, cm, m, km", "millimetres")
}

/// The suffix each type serialises with (its base unit), so output parses back exactly.
pub(crate) mod canonical_suffix {
    pub const SimDuration: &str = "ps";
    pub const Bytes: &str = "B";
    pub const BitRate: &str = "bps";
    pub const Length: &str = "mm";
}

#[cfg(test)]
mod tests {
    use crate::*;

    #[test]
    fn parses_units() {
        assert_eq!("4096B".parse::<Bytes>().unwrap(), Bytes(4096));
        assert_eq!("1MB".parse::<Bytes>().unwrap(), Bytes(1_000_000));
        assert_eq!("1MiB".parse::<Bytes>().unwrap(), Bytes(1 << 20));
        assert_eq!("1.5KB".parse::<Bytes>().unwrap(), Bytes(1500));
        assert_eq!("100Gbps".parse::<BitRate>().unwrap(), BitRate::from_gbps(100));
        assert_eq!("2.5us".parse::<SimDuration>().unwrap(), SimDuration(2_500_000));
        assert_eq!("0.5m".parse::<Length>().unwrap(), Length(500));
        assert_eq!("1_000ns".parse::<SimDuration>().unwrap(), SimDuration::from_us(1));
        assert_eq!(" 3 m ".parse::<Length>().unwrap(), Length(3000));
    }

    #[test]
    fn rejects_bad() {
        assert!(matches!("4096".parse::<Bytes>(), Err(ParseError::NoUnit(_))));
        assert!(matches!("4096b".parse::<Bytes>(), Err(ParseError::UnknownUnit { .. })));
        assert!(matches!("0.5B".parse::<Bytes>(), Err(ParseError::NotIntegral(..))));
        assert!(matches!("1.2.3us".parse::<SimDuration>(), Err(ParseError::BadNumber(_))));
        assert!(matches!("us".parse::<SimDuration>(), Err(ParseError::BadNumber(_))));
        assert!(matches!("-1us".parse::<SimDuration>(), Err(ParseError::BadNumber(_))));
        assert!(matches!("99999999999TiB".parse::<Bytes>(), Err(ParseError::Overflow(_))));
    }

    #[test]
    fn serde_round_trip_and_bare_number_error() {
        #[derive(serde::Deserialize, serde::Serialize, Debug, PartialEq)]
        struct T {
            a: Bytes,
            b: SimDuration,
        }
        let t: T = toml::from_str("a = \"1KiB\"\nb = \"1us\"").unwrap();
        assert_eq!(t, T { a: Bytes(1024), b: SimDuration::from_us(1) });
        let s = toml::to_string(&t).unwrap();
        assert_eq!(toml::from_str::<T>(&s).unwrap(), t);
        let e = toml::from_str::<T>("a = 1024\nb = \"1us\"").unwrap_err().to_string();
        assert!(e.contains("bare number 1024 has no unit"), "{e}");
        assert!(e.contains("line 1"), "{e}");
    }

    proptest::proptest! {
        #[test]
        fn display_free_round_trip(n in 0u64..u64::MAX / 8) {
            let b = Bytes(n);
            let s = format!("{}B", b.0);
            proptest::prop_assert_eq!(s.parse::<Bytes>().unwrap(), b);
            let d = SimDuration(n);
            proptest::prop_assert_eq!(format!("{}ps", n).parse::<SimDuration>().unwrap(), d);
        }
    }
}
