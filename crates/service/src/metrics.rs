//! Prometheus metrics: requests, bytes, errors, requests in flight, durations.
//!
//! `GET /metrics` serves them in the OpenMetrics text format, which Prometheus
//! scrapes as it does its own text format.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The content type of [`Metrics::render`].
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    endpoint: String,
    code: String,
}

/// The server's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    bytes_in: Family<EndpointLabels, Counter>,
    bytes_out: Family<EndpointLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    in_flight: Gauge,
    duration: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("clustercrypt");
        let requests = Family::<RequestLabels, Counter>::default();
        let bytes_in = Family::<EndpointLabels, Counter>::default();
        let bytes_out = Family::<EndpointLabels, Counter>::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let in_flight = Gauge::default();
        // 1 ms to about 9 hours: a health check to a large file.
        let duration = Histogram::new(exponential_buckets(0.001, 4.0, 13));
        registry.register(
            "requests",
            "Requests answered, by endpoint and HTTP status",
            requests.clone(),
        );
        registry.register(
            "bytes_in",
            "Request body bytes read for processing (not those of rejected requests)",
            bytes_in.clone(),
        );
        registry.register("bytes_out", "Response body bytes sent", bytes_out.clone());
        registry.register(
            "errors",
            "Failed requests, by endpoint and error code (including responses aborted mid-stream)",
            errors.clone(),
        );
        registry.register(
            "requests_in_flight",
            "Encryption and decryption requests being processed or waiting for a slot",
            in_flight.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Time from request to the end of the response body",
            duration.clone(),
        );
        Metrics {
            registry,
            requests,
            bytes_in,
            bytes_out,
            errors,
            in_flight,
            duration,
        }
    }

    /// Counts a finished request.
    pub fn request(&self, endpoint: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.into(),
                status: status.to_string(),
            })
            .inc();
        self.duration.observe(seconds);
    }

    /// Counts body bytes received.
    pub fn bytes_in(&self, endpoint: &str, bytes: u64) {
        self.bytes_in
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.into(),
            })
            .inc_by(bytes);
    }

    /// Counts body bytes sent.
    pub fn bytes_out(&self, endpoint: &str, bytes: u64) {
        self.bytes_out
            .get_or_create(&EndpointLabels {
                endpoint: endpoint.into(),
            })
            .inc_by(bytes);
    }

    /// Counts an error by its code.
    pub fn error(&self, endpoint: &str, code: &str) {
        self.errors
            .get_or_create(&ErrorLabels {
                endpoint: endpoint.into(),
                code: code.into(),
            })
            .inc();
    }

    /// The in-flight gauge.
    pub fn in_flight(&self) -> &Gauge {
        &self.in_flight
    }

    /// The metrics in the OpenMetrics text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels() {
        let m = Metrics::new();
        m.request("encrypt", 200, 0.5);
        m.bytes_in("encrypt", 10);
        m.bytes_out("encrypt", 138);
        m.error("decrypt", "wrong_key");
        m.in_flight().inc();
        let text = m.render();
        for want in [
            "clustercrypt_requests_total{endpoint=\"encrypt\",status=\"200\"} 1",
            "clustercrypt_bytes_in_total{endpoint=\"encrypt\"} 10",
            "clustercrypt_bytes_out_total{endpoint=\"encrypt\"} 138",
            "clustercrypt_errors_total{endpoint=\"decrypt\",code=\"wrong_key\"} 1",
            "clustercrypt_requests_in_flight 1",
            "clustercrypt_request_duration_seconds_bucket{le=\"1.024\"} 1",
            "clustercrypt_request_duration_seconds_count 1",
            "clustercrypt_request_duration_seconds_sum 0.5",
        ] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
    }
}
