//! Assembles generated Rust: one formatted file per `.proto` file, holding
//! its enums, message writers and decoders (nested types in per-message
//! modules) and service tables, plus a root file that arranges the files into
//! one module per protobuf package.

mod access;
mod closed_enum;
mod decoder;
mod decoder_debug;
mod enums;
mod extensions;
mod fast_pass;
mod fields;
mod services;
mod strict;
mod visitor;
mod writer;

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use crate::EmitOptions;
use crate::error::CodegenError;
use crate::model::{MessageDef, ProtoFile};
use crate::names::{ident_in, module_name};
use crate::resolve::{Symbols, file_stem, has_module, package_module};

pub use decoder::MAX_DENSE_FIELDS;

/// What emitters need while working on one file.
pub(crate) struct Ctx<'s> {
    pub symbols: &'s Symbols,
    pub file: &'s ProtoFile,
    /// Some field of the schema is a group: decoders must read groups.
    pub groups: bool,
    /// The choices of [`EmitOptions`].
    pub options: &'s EmitOptions,
}

/// The items generated for `file`, unformatted.
pub(crate) fn emit_file(
    symbols: &Symbols,
    file: &ProtoFile,
    groups: bool,
    options: &EmitOptions,
) -> Result<TokenStream, CodegenError> {
    let ctx = Ctx {
        symbols,
        file,
        groups,
        options,
    };
    let module = package_module(&file.package);
    let mut out = TokenStream::new();
    for e in &file.enums {
        out.extend(enums::emit_enum(e, &file.name, options)?);
    }
    for m in &file.messages {
        out.extend(emit_message(&ctx, &module, m)?);
    }
    for s in &file.services {
        out.extend(services::emit_service(s, &file.name)?);
    }
    out.extend(extensions::emit_extensions(
        &ctx,
        &module,
        &file.extensions,
        Some(file_stem(&file.name)),
    )?);
    Ok(out)
}

fn emit_message(
    ctx: &Ctx<'_>,
    module: &[String],
    msg: &MessageDef,
) -> Result<TokenStream, CodegenError> {
    let plans = fields::plan_fields(ctx, module, msg)?;
    let mut out = writer::emit_writer(msg, &ctx.file.name, &plans)?;
    out.extend(decoder::emit_decoder(
        msg,
        &ctx.file.name,
        &plans,
        ctx.groups,
    )?);
    let construct = format!("message {}", msg.full_name);
    let sym = ctx
        .symbols
        .get(&msg.full_name, &ctx.file.name, &construct)?;
    out.extend(visitor::emit_field_enum(
        msg,
        &ctx.file.name,
        &sym.field_enum,
        &plans,
        ctx.groups,
    )?);
    if !has_module(msg) {
        return Ok(out);
    }
    let mod_name = module_name(&msg.name);
    let mut inner_path = module.to_vec();
    inner_path.push(mod_name.clone());
    let inner_plans = fields::plan_fields(ctx, &inner_path, msg)?;
    let mut inner = TokenStream::new();
    for i in 0..msg.oneofs.len() {
        inner.extend(enums::emit_oneof_enum(
            msg,
            i,
            &inner_plans,
            &ctx.file.name,
            ctx.options,
        )?);
    }
    for e in &msg.enums {
        inner.extend(enums::emit_enum(e, &ctx.file.name, ctx.options)?);
    }
    for n in &msg.messages {
        inner.extend(emit_message(ctx, &inner_path, n)?);
    }
    inner.extend(extensions::emit_extensions(
        ctx,
        &inner_path,
        &msg.extensions,
        None,
    )?);
    let m = ident_in(&ctx.file.name, &mod_name)?;
    let doc = format!("Nested types of message `{}`.", msg.full_name);
    out.extend(quote! {
        #[doc = #doc]
        pub mod #m {
            #inner
        }
    });
    Ok(out)
}

/// Formats items as a Rust file that starts with `header`.
pub(crate) fn format(
    header: &str,
    file: &str,
    tokens: TokenStream,
) -> Result<String, CodegenError> {
    let parsed: syn::File = syn::parse2(tokens).map_err(|e| CodegenError::Format {
        file: file.to_owned(),
        message: e.to_string(),
    })?;
    let body = prettyplease::unparse(&parsed);
    let mut out = String::with_capacity(header.len() + body.len() * 101 / 100 + 2);
    out.push_str(header.trim_end());
    out.push_str("\n\n");
    // `#[doc = "x"]` prints as `///x`; doc comments read better as `/// x`.
    for line in body.lines() {
        let trimmed = line.trim_start();
        match trimmed.strip_prefix("///") {
            Some(rest) if !rest.is_empty() && !rest.starts_with(' ') => {
                out.push_str(&line[..line.len() - trimmed.len()]);
                out.push_str("/// ");
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}

/// Path of the Rust file generated for a `.proto` file (relative, `/`-separated).
pub(crate) fn rust_file_name(proto: &str) -> String {
    let stem = proto.strip_suffix(".proto").unwrap_or(proto);
    format!("{stem}.rs")
}

#[derive(Default)]
struct ModTree {
    includes: Vec<String>,
    children: BTreeMap<String, ModTree>,
}

/// The root file: one module per package segment, each `include!`-ing the
/// files of its package, and optionally the descriptor set constant. Errors
/// name `root_file`.
pub(crate) fn emit_root(
    files: &[ProtoFile],
    root_file: &str,
    descriptor_set: Option<&str>,
) -> Result<TokenStream, CodegenError> {
    let mut root = ModTree::default();
    for f in files {
        let mut node = &mut root;
        for seg in package_module(&f.package) {
            node = node.children.entry(seg).or_default();
        }
        node.includes.push(rust_file_name(&f.name));
    }
    sort_includes(&mut root);
    let mut out = tree_tokens(&root, "", root_file)?;
    if let Some(name) = descriptor_set {
        out.extend(quote! {
            /// The schemas as a binary `google.protobuf.FileDescriptorSet`
            /// (every file, imports first), for reflection and text-format parsing.
            pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(#name);
        });
    }
    Ok(out)
}

fn sort_includes(node: &mut ModTree) {
    node.includes.sort();
    node.children.values_mut().for_each(sort_includes);
}

fn tree_tokens(node: &ModTree, package: &str, file: &str) -> Result<TokenStream, CodegenError> {
    let includes = node.includes.iter().map(|p| quote! { include!(#p); });
    let mut children = TokenStream::new();
    for (seg, child) in &node.children {
        let raw = seg.strip_prefix("r#").unwrap_or(seg);
        let full = if package.is_empty() {
            raw.to_owned()
        } else {
            format!("{package}.{raw}")
        };
        let doc = if child.includes.is_empty() {
            format!("Packages under `{full}`.")
        } else {
            format!("Protobuf package `{full}`.")
        };
        let m = ident_in(file, seg)?;
        let inner = tree_tokens(child, &full, file)?;
        children.extend(quote! {
            #[doc = #doc]
            pub mod #m {
                #inner
            }
        });
    }
    Ok(quote! { #(#includes)* #children })
}
