//! Summary statistics over repeated runs.

use serde::{Deserialize, Serialize};

/// Mean, median, extremes and sample standard deviation of a set of figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle values for an even count).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation (n - 1); zero for one value.
    pub stddev: f64,
    /// Number of values.
    pub n: usize,
}

impl Stats {
    /// Statistics of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Stats> {
        if values.is_empty() {
            return None;
        }
        let n = values.len();
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / n as f64;
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let stddev = if n > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Stats {
            mean,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            stddev,
            n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert_eq!((s.min, s.max, s.n), (2.0, 9.0, 8));
        assert!((s.stddev - 2.138_089_935).abs() < 1e-6, "{}", s.stddev);
        let one = Stats::of(&[3.5]).unwrap();
        assert_eq!((one.mean, one.median, one.stddev), (3.5, 3.5, 0.0));
        assert_eq!(Stats::of(&[1.0, 3.0, 2.0]).unwrap().median, 2.0);
        assert!(Stats::of(&[]).is_none());
    }
}
