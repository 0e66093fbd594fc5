//! The JIT tables (upstream's `jit_tables.py`): code a virtual machine
//! generated at run time, one row per piece of code it loaded
//! (`__intrinsic_jit_code`), and the stack-profile frames that fell in
//! such code (`__intrinsic_jit_frame`). The V8 importer fills them through
//! the JIT caches of `tracker/jit_cache.rs`; their views are the
//! `stack_trace.jit` module's.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `__intrinsic_jit_code`: one piece of generated code.
    pub struct JitCodeRow in "__intrinsic_jit_code" sorted by create_ts {
        /// When the code was created.
        create_ts: i64,
        /// When the code was found gone (an upper bound: newer code was
        /// loaded over it); NULL while it lives.
        estimated_delete_ts: Option<i64>,
        /// The thread that generated it.
        utid: u32,
        /// Its first address.
        start_address: i64,
        /// Its size in bytes.
        size: i64,
        /// The function it is the code of.
        function_name: StrId,
        /// Its machine code in base64 ("" when not recorded).
        native_code_base64: StrId,
        /// The row's id again, for joins.
        jit_code_id: u32,
    }
}

table! {
    /// A row of `__intrinsic_jit_frame`: a stack-profile frame that lies in
    /// generated code.
    pub struct JitFrameRow in "__intrinsic_jit_frame" {
        /// The code the frame is in (`__intrinsic_jit_code.id`).
        jit_code_id: u32,
        /// The frame (`stack_profile_frame.id`).
        frame_id: u32,
    }
}

/// The JIT tables' rows as the importers fill them.
#[derive(Debug, Clone, Default)]
pub struct JitRows {
    /// `__intrinsic_jit_code`.
    pub code: Vec<JitCodeRow>,
    /// `__intrinsic_jit_frame`.
    pub frames: Vec<JitFrameRow>,
}

#[cfg(feature = "sql")]
impl JitRows {
    /// Both JIT tables, frozen.
    pub fn freeze(
        &self,
        strings: &std::sync::Arc<crate::column_store::strings::StringPool>,
    ) -> Vec<crate::column_store::table::Table> {
        vec![
            JitCodeRow::freeze(&self.code, strings),
            JitFrameRow::freeze(&self.frames, strings),
        ]
    }
}

/// The JIT tables' declarations.
pub const TABLES: &[super::TableDecl] = &[JitCodeRow::TABLE, JitFrameRow::TABLE];
