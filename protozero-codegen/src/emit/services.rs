//! Emits one `protozero::ServiceDescriptor` constant per service: the method
//! table the IPC layer binds and dispatches by (1-based ids in declaration
//! order, request/response type names, streaming flags).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::error::CodegenError;
use crate::model::ServiceDef;
use crate::names::{ident_in, service_const};

/// `pub const SERVICE_NAME: ServiceDescriptor = ...;`
pub(crate) fn emit_service(s: &ServiceDef, file: &str) -> Result<TokenStream, CodegenError> {
    let konst = ident_in(file, &service_const(&s.name))?;
    let name = &s.name;
    let full_name = &s.full_name;
    let doc = format!(
        "Method table of service `{full_name}` (from `{file}`); method ids are 1-based in declaration order."
    );
    let methods = s.methods.iter().enumerate().map(|(i, m)| {
        let id = Literal::u32_unsuffixed(u32::try_from(i + 1).unwrap_or(u32::MAX));
        let mname = &m.name;
        let input = &m.input_type;
        let output = &m.output_type;
        let cs = m.client_streaming;
        let ss = m.server_streaming;
        quote! {
            ::protozero::MethodDescriptor {
                id: #id,
                name: #mname,
                input_type: #input,
                output_type: #output,
                client_streaming: #cs,
                server_streaming: #ss,
            },
        }
    });
    Ok(quote! {
        #[doc = #doc]
        pub const #konst: ::protozero::ServiceDescriptor = ::protozero::ServiceDescriptor {
            name: #name,
            full_name: #full_name,
            methods: &[#(#methods)*],
        };
    })
}
