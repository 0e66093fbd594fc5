//! The frozen tables' columns, orders and lookups, checked on small tables.

use super::*;

#[test]
fn a_string_column_orders_by_text_with_null_first() {
    let mut pool = StringPool::default();
    let b = pool.intern("b");
    let a = pool.intern("a");
    let upper = pool.intern("Z");
    let t = Table {
        name: "t",
        columns: vec![Column::str("s", vec![b, StrId::NULL, a, upper, b])],
        len: 5,
        has_id: false,
        sorted_by: None,
        strings: Arc::new(pool),
        orders: Default::default(),
    };
    // NULL, then "Z" (0x5a) before "a" and "b", ties in row order.
    assert_eq!(&*t.order(0), &[1, 3, 2, 0, 4]);
}

/// Only present values take room, and each row still reads its own
/// across words of the presence bits (runs of NULL, of values, a word
/// all NULL, the last word part full).
#[test]
fn nullable_values_keep_only_those_present() {
    let v: Vec<Option<f64>> = (0..300)
        .map(|i| match i {
            0..64 => (i % 5 == 0).then_some(f64::from(i)),
            64..128 => None,
            128..200 => Some(f64::from(i) / 2.0),
            _ => (i % 7 == 1).then_some(-f64::from(i)),
        })
        .collect();
    let n = Nullable::pack(v.clone(), |x| x);
    assert_eq!(n.values.len(), v.iter().flatten().count());
    for (i, x) in v.iter().enumerate() {
        assert_eq!(n.get(i), *x, "row {i}");
    }
    assert_eq!(n.get(300), None);
    assert_eq!(n.get(usize::MAX), None);
}

#[test]
fn compact_columns_read_back_what_they_were_given() {
    let id = Column::int("id", vec![0, 1, 2]);
    assert!(matches!(id.data, ColumnData::RowIndex(3)));
    assert_eq!(id.int_at(2), Some(2));
    assert_eq!(id.int_at(3), None);
    let small = Column::int("s", vec![5, -7, 1]);
    assert!(matches!(small.data, ColumnData::Int32(_)));
    assert_eq!(small.int_at(1), Some(-7));
    let big = Column::int("b", vec![1, i64::MAX]);
    assert!(matches!(big.data, ColumnData::Int(_)));
    assert_eq!(big.int_at(1), Some(i64::MAX));
    let v: Vec<Option<i64>> = (0..130).map(|i| (i % 3 == 0).then_some(i * 10)).collect();
    let opt = Column::opt_int("o", v.clone());
    for (i, x) in v.iter().enumerate() {
        assert_eq!(opt.int_at(i), *x);
    }
    assert_eq!(opt.int_at(130), None);
    let t = Table {
        name: "t",
        columns: vec![
            Column::int("id", vec![0, 1, 2, 3]),
            Column::opt_int("v", vec![Some(5), None, Some(-1), Some(5)]),
            Column::opt_real("r", vec![Some(2.5), Some(-1.0), None, Some(0.0)]),
            Column::str("s", vec![StrId(4), StrId::NULL, StrId(2), StrId(4)]),
        ],
        len: 4,
        has_id: true,
        sorted_by: None,
        strings: Arc::new(StringPool::default()),
        orders: Default::default(),
    };
    assert_eq!(&*t.order(1), &[1, 2, 0, 3]);
    assert_eq!(&*t.order(2), &[2, 1, 3, 0]);
    assert_eq!(&*t.order(0), &[0, 1, 2, 3]);
    assert!(t.is_text(3) && !t.is_text(1));
    let none = Column::opt_int("n", vec![None; 10]);
    assert!(
        matches!(&none.data, ColumnData::OptInt(NullableInts::Narrow(n)) if n.values.is_empty())
    );
    let wide = Column::opt_int("w", vec![None, Some(i64::MIN), Some(3)]);
    assert!(matches!(
        &wide.data,
        ColumnData::OptInt(NullableInts::Wide(_))
    ));
    assert_eq!(
        (0..4).map(|i| wide.int_at(i)).collect::<Vec<_>>(),
        vec![None, Some(i64::MIN), Some(3), None]
    );
    let reals = Column::opt_real("r", vec![Some(1.5), None, Some(-0.0)]);
    let t = Table {
        name: "t",
        columns: vec![reals],
        len: 3,
        has_id: false,
        sorted_by: None,
        strings: Arc::new(StringPool::default()),
        orders: Default::default(),
    };
    assert_eq!(t.cell(0, 0), Cell::Real(1.5));
    assert_eq!(t.cell(1, 0), Cell::Null);
    assert_eq!(t.cell(2, 0), Cell::Real(-0.0));
    assert_eq!(none.int_at(4), None);
    assert!(id.ascends() && !small.ascends() && big.ascends());
}
/// A column read through another table's rows gives that table's
/// values (NULL for no row), orders and reports NULLs by what it reads,
/// and searches as a stored column would.
#[test]
fn a_lookup_column_reads_through_another_tables_rows() {
    let mut pool = StringPool::default();
    let (a, b) = (pool.intern("a"), pool.intern("b"));
    let pool = Arc::new(pool);
    let source = Arc::new(Table {
        name: "src",
        columns: vec![
            Column::int("id", vec![0, 1, 2]),
            Column::str("s", vec![b, a, StrId::NULL]),
            Column::opt_int("n", vec![Some(7), None, Some(-3)]),
            Column::real("r", vec![2.5, -1.0, 0.0]),
        ],
        len: 3,
        has_id: true,
        sorted_by: None,
        strings: pool.clone(),
        orders: Default::default(),
    });
    let rows: Arc<[u32]> = vec![2, 0, Lookup::NO_ROW, 1, 0].into();
    let via = |name, col| Column::lookup(name, rows.clone(), source.clone(), col);
    let t = Table {
        name: "t",
        columns: vec![via("id", 0), via("s", 1), via("n", 2), via("r", 3)],
        len: 5,
        has_id: false,
        sorted_by: None,
        strings: pool,
        orders: Default::default(),
    };
    let col = |c: usize| (0..5).map(|r| t.cell(r, c)).collect::<Vec<_>>();
    assert_eq!(
        col(0),
        [
            Cell::Int(2),
            Cell::Int(0),
            Cell::Null,
            Cell::Int(1),
            Cell::Int(0)
        ]
    );
    assert_eq!(
        col(1),
        [
            Cell::Null,
            Cell::Str("b"),
            Cell::Null,
            Cell::Str("a"),
            Cell::Str("b")
        ]
    );
    assert_eq!(
        col(2),
        [
            Cell::Int(-3),
            Cell::Int(7),
            Cell::Null,
            Cell::Null,
            Cell::Int(7)
        ]
    );
    assert_eq!(t.str_id(3, 1), Some(a));
    assert_eq!(t.str_id(2, 1), Some(StrId::NULL));
    assert!(t.is_text(1) && t.is_int(0) && t.is_int(2) && !t.is_int(3));
    // NULL first, ties in row order.
    assert_eq!(&*t.order(0), &[2, 1, 4, 3, 0]);
    assert_eq!(&*t.order(1), &[0, 2, 3, 1, 4]);
    assert_eq!(&*t.order(2), &[2, 3, 0, 1, 4]);
    assert_eq!(&*t.order(3), &[2, 3, 0, 1, 4]);
    // NO_ROW makes even a column without NULLs nullable; rows that
    // all have values keep it NOT NULL.
    assert!(t.columns.iter().all(Column::nullable));
    let whole = Column::lookup("id", vec![1, 0].into(), source.clone(), 0);
    assert!(!whole.nullable() && !whole.ascends());
    let up = Column::lookup("id", vec![0, 2, 2].into(), source, 0);
    assert!(up.ascends() && up.is_int());
    assert!(t.schema().contains("\"id\" BIGINT,"));
}
