//! The code generated for `fixtures_names` (a dotted file name declaring
//! extensions, a dashed one, keyword and underscore-digit names) compiles,
//! and its writers and decoders round-trip through the sanitized names.

use protozero::HeapWriter;
use protozero_codegen_fixtures::names::fixture::names::r#type::{
    HTTPServer, HTTPServerDecoder, SELF, http_server,
};
use protozero_codegen_fixtures::names::fixture::names::{
    FooBaseClientHTTPServerDecoderExt, FooBaseClientHTTPServerExt,
    FooBaseClientMessageOptionsDecoderExt, FooBaseClientMessageOptionsExt,
};
use protozero_codegen_fixtures::names::google::protobuf::{MessageOptions, MessageOptionsDecoder};

fn encode(f: impl FnOnce(&mut HeapWriter)) -> Vec<u8> {
    let mut w = HeapWriter::new();
    f(&mut w);
    w.finish().unwrap()
}

#[test]
fn extension_declared_in_a_dotted_file_round_trips() {
    let bytes = encode(|w| {
        let mut o = MessageOptions::from_message(w.root());
        o.set_x(-5);
    });
    let d = MessageOptionsDecoder::new(&bytes);
    assert_eq!(FooBaseClientMessageOptionsDecoderExt::x(&d), Some(-5));
    assert_eq!(
        <MessageOptions<'_> as FooBaseClientMessageOptionsExt<'_>>::FIELD_X,
        50001
    );
}

#[test]
fn keyword_and_underscore_names_round_trip() {
    let bytes = encode(|w| {
        let mut s = HTTPServer::from_message(w.root());
        s.set_type(1)
            .set_self(true)
            .set_1a("a")
            .set_x(4)
            .add_crate(http_server::Self_::Type)
            .set_super("s")
            .set_client_tag("tag");
    });
    let d = HTTPServerDecoder::new(&bytes);
    assert_eq!(d.r#type(), Some(1));
    assert_eq!(d.self_(), Some(true));
    assert_eq!(d._1a(), Some("a"));
    assert_eq!(d.x(), Some(4));
    assert_eq!(d.crate_().collect::<Vec<_>>(), [http_server::Self_::Type]);
    assert!(matches!(
        d.which_match(),
        Some(http_server::Match::Super("s"))
    ));
    assert_eq!(d.client_tag(), Some("tag"));
    assert_eq!(HTTPServer::FIELD_1A, 3);
    assert_eq!(http_server::Self_::V2nd as i32, 2);
    assert_eq!(SELF.name, "self");
    assert_eq!(SELF.methods[0].name, "type");
}
