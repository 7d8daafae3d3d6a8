//! Parsing of byte sizes (`64K`, `1M`, `1MiB`, `65536`) and thread counts.

/// Parses a size with an optional binary suffix (K, M, G; KiB, MiB, GiB; k, m, g).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: usize = digits
        .parse()
        .map_err(|_| format!("'{text}' is not a size (examples: 65536, 64K, 1M)"))?;
    let mult: usize = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        "g" | "gib" | "gb" => 1 << 30,
        _ => return Err(format!("'{text}' has an unknown unit (use K, M or G)")),
    };
    let v = n
        .checked_mul(mult)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    if v == 0 {
        return Err(format!("'{text}' must be more than zero"));
    }
    Ok(v)
}

/// Parses `all` or a positive number of threads.
pub fn parse_threads(text: &str) -> Result<usize, String> {
    if text.eq_ignore_ascii_case("all") {
        return Ok(std::thread::available_parallelism().map_or(1, |n| n.get()));
    }
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "'{text}' is not a thread count (a positive number or 'all')"
        )),
    }
}

/// Parses `N` (passes per direction) or `ENC,DEC` (passes of each).
pub fn parse_passes(text: &str) -> Result<[u32; 2], String> {
    let err = || format!("'{text}' is not a number of passes (N or ENC,DEC, e.g. 3 or 3,1)");
    let num = |t: &str| t.trim().parse::<u32>().map_err(|_| err());
    let passes = match text.split_once(',') {
        None => [num(text)?; 2],
        Some((e, d)) => [num(e)?, num(d)?],
    };
    if passes == [0, 0] {
        return Err(format!("'{text}' asks for no work (at least one pass)"));
    }
    Ok(passes)
}

/// Parses a positive number of seconds (fractions allowed).
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Ok(s),
        _ => Err(format!(
            "'{text}' is not a time in seconds (0 < seconds <= 3600)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn threads_and_seconds() {
        assert_eq!(parse_threads("3"), Ok(3));
        assert!(parse_threads("all").unwrap() >= 1);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("two").is_err());
        assert_eq!(parse_seconds("0.5"), Ok(0.5));
        assert!(parse_seconds("0").is_err());
        assert!(parse_seconds("nan").is_err());
        assert_eq!(parse_passes("3"), Ok([3, 3]));
        assert_eq!(parse_passes("3,1"), Ok([3, 1]));
        assert_eq!(parse_passes("0,2"), Ok([0, 2]));
        assert!(parse_passes("0").is_err());
        assert!(parse_passes("1,").is_err());
        assert!(parse_passes("-1").is_err());
    }
}
