//! What the session answers for the methods it does not serve (metrics,
//! trace summaries, metatracing, export), so that a client raises with a
//! message instead of taking an empty answer as an empty success: Google's
//! Python client reads `/compute_metric`'s body as a `ComputeMetricResult`
//! and raises only when its `error` is set, and an empty body has none.
//! Each answer is the method's own result message with its `error` field
//! set, as upstream's server answers a method that fails; on the framed
//! stream the same result goes in the response's field for the method.

use protozero::HeapWriter;

/// A method the session does not serve, with a result that carries an
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// `/compute_metric`, `TPM_COMPUTE_METRIC`: a `ComputeMetricResult`.
    ComputeMetric,
    /// `/trace_summary`, `TPM_SUMMARIZE_TRACE`: a `TraceSummaryResult`.
    TraceSummary,
    /// `/disable_and_read_metatrace`, `TPM_DISABLE_AND_READ_METATRACE`: a
    /// `DisableAndReadMetatraceResult`.
    Metatrace,
    /// `/export`, `TPM_EXPORT`: an `ExportResult`.
    Export,
}

impl Unsupported {
    /// The method an HTTP endpoint stands for, if it is one of these.
    pub fn for_endpoint(uri: &str) -> Option<Self> {
        Some(match uri {
            "/compute_metric" => Unsupported::ComputeMetric,
            "/trace_summary" => Unsupported::TraceSummary,
            "/disable_and_read_metatrace" => Unsupported::Metatrace,
            "/export" => Unsupported::Export,
            _ => return None,
        })
    }

    /// Why it is not served.
    pub fn message(self) -> &'static str {
        match self {
            Unsupported::ComputeMetric => {
                "zerotrace's trace processor does not compute metrics (compute_metric is not \
                 supported); query the tables with SQL instead"
            }
            Unsupported::TraceSummary => {
                "zerotrace's trace processor does not compute trace summaries (trace_summary \
                 is not supported); query the tables with SQL instead"
            }
            Unsupported::Metatrace => {
                "zerotrace's trace processor does not record a metatrace (metatracing is not \
                 supported)"
            }
            Unsupported::Export => {
                "zerotrace's trace processor does not export over the RPC (export is not \
                 supported); use `zerotrace export` on the trace file"
            }
        }
    }

    /// The result message's field number of `error`.
    fn error_field(self) -> u32 {
        match self {
            Unsupported::ComputeMetric => 2,
            Unsupported::TraceSummary => 3,
            Unsupported::Metatrace => 2,
            Unsupported::Export => 2,
        }
    }

    /// `TraceProcessorRpc`'s field number of the result.
    pub(crate) fn response_field(self) -> u32 {
        match self {
            Unsupported::ComputeMetric => 205,
            Unsupported::TraceSummary => 214,
            Unsupported::Metatrace => 209,
            Unsupported::Export => 220,
        }
    }

    /// The encoded result message, its `error` saying why.
    pub fn result(self) -> Vec<u8> {
        let mut w = HeapWriter::new();
        w.root()
            .append_bytes(self.error_field(), self.message().as_bytes());
        w.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_result_carries_its_error_in_the_field_upstream_reads() {
        for (u, tag) in [
            (Unsupported::ComputeMetric, 0x12),
            (Unsupported::TraceSummary, 0x1a),
            (Unsupported::Metatrace, 0x12),
            (Unsupported::Export, 0x12),
        ] {
            let r = u.result();
            assert_eq!(r[0], tag, "{u:?}");
            assert!(String::from_utf8_lossy(&r).contains("not supported"));
        }
        assert_eq!(Unsupported::for_endpoint("/status"), None);
    }
}
