//! CommitDataRequest as the service decodes it from a producer: either a
//! typed error, or a request that survives encode → decode unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zerotrace_core::producer::CommitDataRequest;

fuzz_target!(|data: &[u8]| {
    if let Ok(req) = CommitDataRequest::decode(data) {
        let again = CommitDataRequest::decode(&req.encode()).expect("re-encoded request decodes");
        assert_eq!(again, req);
    }
});
