//! The lenient scan's tests: fields, strings and escapes, numbers read
//! as their text gives them, values cut short.

use super::*;

#[test]
fn fields_in_order_with_a_trailing_comma_and_raw_nested_values() {
    let buf = br#"{"b": 1, "a": [1, {"x": "]"}], "c": {"d": 2.5}, "e": "q\"\u00e9",}"#;
    let mut f = Fields::new(buf, 0).unwrap();
    let mut got = Vec::new();
    while let Some((k, v)) = f.next_field().unwrap() {
        got.push((k.into_owned(), v));
    }
    assert_eq!(got[0], ("b".to_owned(), Value::Int(1)));
    assert_eq!(
        got[1],
        ("a".to_owned(), Value::Array(br#"[1, {"x": "]"}]"#))
    );
    assert_eq!(got[2], ("c".to_owned(), Value::Object(br#"{"d": 2.5}"#)));
    assert_eq!(got[3], ("e".to_owned(), Value::Str("q\"é".into())));
}

/// Escapes anywhere in a string, back to back, unknown (dropped)
/// and a lone backslash at the end unescape as upstream does.
#[test]
fn escapes_unescape_between_plain_runs() {
    let cases: [(&[u8], &[u8]); 8] = [
        (b"plain", b"plain"),
        (br"a\tb\\c\/d", b"a\tb\\c/d"),
        (br"\n\r\b\f", b"\n\r\x08\x0c"),
        (br#"\"q\""#, b"\"q\""),
        (br"x\u00e9y\u0041", "x\u{e9}yA".as_bytes()),
        (br"unknown \x escape", b"unknown  escape"),
        (br"ends\\", b"ends\\"),
        (br"lone\", b"lone"),
    ];
    for (raw, want) in cases {
        assert_eq!(unescape_bytes(raw).unwrap(), want, "{raw:?}");
    }
    // Bytes that are not UTF-8 become replacement characters.
    assert_eq!(unescape(b"caf\\u00e9 \xff").unwrap(), "caf\u{e9} \u{fffd}");
}

#[test]
fn memchr2_finds_the_first_of_either_byte_at_every_position() {
    for len in 0..40 {
        for at in 0..len {
            for (x, other) in [(b'"', b'\\'), (b'\\', b'"')] {
                let mut hay = vec![b'a'; len];
                hay[at] = x;
                if at + 3 < len {
                    hay[at + 3] = other;
                }
                assert_eq!(memchr2(b'"', b'\\', &hay), Some(at), "{len} {at}");
            }
        }
        // Bytes one away from the targets (borrow edge cases).
        let hay: Vec<u8> = (0..len).map(|i| [b'!', b'#', 0x80, 0xa2][i % 4]).collect();
        assert_eq!(memchr2(b'"', b'\\', &hay), None);
    }
}

#[test]
fn a_block_scan_resumed_piece_by_piece_ends_where_a_whole_scan_does() {
    let obj = br#"{"a": "}\"{", "b": {"c": [1, "}"]}} tail"#;
    let whole = block_end(obj, 0).unwrap().1;
    let mut scan = BlockScan::default();
    let mut got = None;
    for n in 1..=obj.len() {
        if let Some(end) = scan.advance(&obj[..n]) {
            got = Some(end);
            break;
        }
    }
    assert_eq!(got, Some(whole));
}

/// The numbers gathered while scanned are, bit for bit, those
/// `parse_number` makes of their text, on every path (integers near
/// the i64 bounds, fractions of many digits, exponents).
#[test]
fn scanned_numbers_are_those_read_from_their_text() {
    let mut texts: Vec<String> = [
        "0",
        "-0",
        "7",
        "-7",
        "0.5",
        "-0.5",
        "1367415.699",
        "10.997",
        "0.839603",
        "123456789012345.678901234567890123",
        "1234567890123456.5",
        "99999999999999999999",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "1e3",
        "1.5E-2",
        "-2.5e+10",
        "0.000000000000000001",
        "0.0000000000000000001",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // Fractions of every digit count on both sides.
    let digits = "3141592653589793238462643383279502884197169399375105";
    for a in 1..=20 {
        for b in 0..=22 {
            let mut t = digits[..a].to_owned();
            if b > 0 {
                t.push('.');
                t.push_str(&digits[a..a + b]);
            }
            texts.push(t.clone());
            texts.push(format!("-{t}"));
        }
    }
    for t in texts {
        let int_like = !t.contains(['.', 'e', 'E']);
        let want = parse_number(&t, int_like).unwrap();
        let buf = format!("{t},");
        let (got, end) = value(buf.as_bytes(), 0).unwrap();
        assert_eq!(end, t.len(), "{t}");
        match (&got, &want) {
            (Value::Float(g), Value::Float(w)) => assert_eq!(g.to_bits(), w.to_bits(), "{t}"),
            _ => assert_eq!(got, want, "{t}"),
        }
    }
}

#[test]
fn a_value_cut_short_is_incomplete_and_a_wrong_one_invalid() {
    assert_eq!(value(b"12", 0), Err(ScanError::Incomplete));
    assert_eq!(value(b"12,", 0), Ok((Value::Int(12), 2)));
    assert_eq!(value(b"tr", 0), Err(ScanError::Incomplete));
    assert!(matches!(value(b"tx", 0), Err(ScanError::Invalid(_))));
    assert_eq!(value(b"\"ab", 0), Err(ScanError::Incomplete));
    assert_eq!(value(b"{\"a\": [", 0), Err(ScanError::Incomplete));
    assert_eq!(value(b"5.1 ", 0), Ok((Value::Float(5.1), 3)));
    assert_eq!(value(b"-0,", 0), Ok((Value::Int(0), 2)));
    assert_eq!(
        value(b"-9223372036854775808,", 0),
        Ok((Value::Int(i64::MIN), 20))
    );
    assert_eq!(
        value(b"9223372036854775807,", 0),
        Ok((Value::Int(i64::MAX), 19))
    );
    assert!(matches!(
        value(b"9223372036854775808,", 0),
        Ok((Value::Float(_), 19))
    ));
    assert!(matches!(
        value(b"-9223372036854775809,", 0),
        Ok((Value::Float(_), 20))
    ));
    // Past i64: a double.
    assert!(matches!(
        value(b"99999999999999999999 ", 0),
        Ok((Value::Float(d), 20)) if (d - 1e20).abs() < 1e6
    ));
}
