//! CommitDataRequest as the service decodes it from a producer: either a
//! typed error, or a request that survives encode → decode unchanged.

use zerotrace_core::protocol::CommitDataRequest;

/// The `commit_data_request` target.
pub fn commit_data_request(data: &[u8]) {
    if let Ok(req) = CommitDataRequest::decode(data) {
        let again = CommitDataRequest::decode(&req.encode()).expect("re-encoded request decodes");
        assert_eq!(again, req);
    }
}
