//! The Java heap graph tables (upstream's heap graph part of
//! `profiler_tables.py`): the classes, objects, references and primitive
//! fields of the heap dumps ART writes (`HeapGraph` packets). Each row's
//! id is its index, as upstream's; the `heap_graph` table itself (one row
//! per dump) is in `tables/profiling.rs` with the other dump tables.

use super::table;
use crate::column_store::strings::StrId;

table! {
    /// A row of `heap_graph_class`: one Java class of one dump.
    pub struct HeapGraphClassRow in "__intrinsic_heap_graph_class",
        views ["heap_graph_class"] {
        /// The (possibly obfuscated) class name.
        name: StrId,
        /// The name after deobfuscation, when a mapping named it.
        deobfuscated_name: StrId,
        /// The APK or jar the class was loaded from.
        location: StrId,
        /// The superclass, a `heap_graph_class` id.
        superclass_id: Option<u32>,
        /// The class loader's object (a `heap_graph_object` id).
        classloader_id: Option<u32>,
        /// The kind of class (`KIND_NORMAL`, `KIND_ARRAY`, ...).
        kind: StrId,
    }
}

table! {
    /// A row of `heap_graph_object`: one Java object of one dump.
    pub struct HeapGraphObjectRow in "__intrinsic_heap_graph_object",
        views ["heap_graph_object"] {
        /// The process.
        upid: u32,
        /// The dump's time.
        graph_sample_ts: i64,
        /// Bytes of the object itself.
        self_size: i64,
        /// Native bytes the object keeps alive (through a
        /// `NativeAllocationRegistry` cleaner).
        native_size: i64,
        /// The object's outgoing references
        /// (`heap_graph_reference.reference_set_id`).
        reference_set_id: Option<u32>,
        /// Whether a root reaches the object (1) or not (0).
        reachable: i32,
        /// The heap the object lives on (`HEAP_TYPE_APP`, ...).
        heap_type: StrId,
        /// The object's class (`heap_graph_class.id`).
        type_id: u32,
        /// The kind of root the object is, when it is one.
        root_type: StrId,
        /// Distance from a root (-1: not computed by this importer).
        root_distance: i32,
        /// Extra data of the object (`heap_graph_object_data.id`).
        object_data_id: Option<u32>,
    }
}

table! {
    /// A row of `heap_graph_object_data`: the primitive data of an object.
    pub struct HeapGraphObjectDataRow in "__intrinsic_heap_graph_object_data",
        views ["heap_graph_object_data"] {
        /// The object's primitive fields (`heap_graph_primitive.field_set_id`).
        field_set_id: Option<u32>,
        /// A string object's value.
        value_string: StrId,
        /// An array's element type.
        array_element_type: StrId,
        /// An array's length.
        array_element_count: Option<u32>,
        /// An array's data.
        array_data_id: Option<u32>,
        /// A hash of an array's data.
        array_data_hash: Option<i64>,
    }
}

table! {
    /// A row of `heap_graph_primitive`: one primitive field of an object.
    pub struct HeapGraphPrimitiveRow in "__intrinsic_heap_graph_primitive",
        views ["heap_graph_primitive"] {
        /// The object's set of fields.
        field_set_id: u32,
        /// The field's name.
        field_name: StrId,
        /// The field's Java type.
        field_type: StrId,
        /// A `boolean` value.
        bool_value: Option<i64>,
        /// A `byte` value.
        byte_value: Option<i64>,
        /// A `char` value.
        char_value: Option<i64>,
        /// A `short` value.
        short_value: Option<i64>,
        /// An `int` value.
        int_value: Option<i64>,
        /// A `long` value.
        long_value: Option<i64>,
        /// A `float` value.
        float_value: Option<f64>,
        /// A `double` value.
        double_value: Option<f64>,
    }
}

table! {
    /// A row of `heap_graph_reference`: one reference from an object's
    /// field to another object.
    pub struct HeapGraphReferenceRow in "__intrinsic_heap_graph_reference",
        views ["heap_graph_reference"] {
        /// The owner's set of references (`heap_graph_object.reference_set_id`).
        reference_set_id: u32,
        /// The object holding the reference.
        owner_id: u32,
        /// The object referred to (NULL for a null reference).
        owned_id: Option<u32>,
        /// The field's name (`class.field`).
        field_name: StrId,
        /// The field's declared type.
        field_type_name: StrId,
        /// The field's name after deobfuscation.
        deobfuscated_field_name: StrId,
    }
}

/// The heap graph tables' declarations, in the order they are built.
pub const TABLES: &[super::TableDecl] = &[
    HeapGraphClassRow::TABLE,
    HeapGraphObjectRow::TABLE,
    HeapGraphObjectDataRow::TABLE,
    HeapGraphPrimitiveRow::TABLE,
    HeapGraphReferenceRow::TABLE,
];
