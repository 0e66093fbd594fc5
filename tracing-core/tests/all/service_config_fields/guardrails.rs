//! The guardrails of `enable_extra_guardrails`: buffer sizes and their
//! total, deferred starts and durations, sessions of one name.

use super::*;

#[test]
fn guardrails_size_multiple_of_four() {
    let guarded = |c: &mut TraceConfig<'_>| {
        c.set_enable_extra_guardrails(true);
    };
    let err = parse(guarded, &[64, 6]).unwrap_err();
    assert!(
        err.contains("multiple of 4") && err.contains("size_kb 6"),
        "{err}"
    );
    assert!(parse(guarded, &[64, 8]).is_ok());
    assert!(parse(|_| {}, &[6]).is_ok(), "only with the guardrails");
}

#[test]
fn guardrails_total_buffer_size_and_its_override() {
    let guarded = |c: &mut TraceConfig<'_>| {
        c.set_enable_extra_guardrails(true);
    };
    // Each under 128 MiB, together over.
    let err = parse(guarded, &[100 * MIB_KB, 100 * MIB_KB]).unwrap_err();
    assert!(err.contains("enable_extra_guardrails"), "{err}");
    assert!(
        parse(guarded, &[64 * MIB_KB, 64 * MIB_KB]).is_ok(),
        "128 MiB is the limit"
    );
    assert!(
        parse(|_| {}, &[100 * MIB_KB, 100 * MIB_KB]).is_ok(),
        "only with the guardrails"
    );
    // The override raises the limit...
    let raised = |kb: u32| {
        move |c: &mut TraceConfig<'_>| {
            c.set_enable_extra_guardrails(true);
            c.begin_guardrail_overrides()
                .set_max_tracing_buffer_size_kb(kb);
        }
    };
    assert!(parse(raised(256 * MIB_KB), &[100 * MIB_KB, 100 * MIB_KB]).is_ok());
    assert!(parse(raised(256 * MIB_KB), &[200 * MIB_KB, 100 * MIB_KB]).is_err());
    // ...and never lowers it.
    assert!(parse(raised(MIB_KB), &[100 * MIB_KB]).is_ok());
}

#[test]
fn guardrails_refuse_deferred_start_and_cap_duration() {
    let err = parse(
        |c| {
            c.set_enable_extra_guardrails(true);
            c.set_deferred_start(true);
        },
        &[64],
    )
    .unwrap_err();
    assert!(err.contains("deferred_start"), "{err}");
    assert!(
        parse(
            |c| {
                c.set_deferred_start(true);
            },
            &[64]
        )
        .is_ok()
    );
    let day = 24 * 3600 * 1000;
    let guarded_for = |ms: u32| {
        move |c: &mut TraceConfig<'_>| {
            c.set_enable_extra_guardrails(true);
            c.set_duration_ms(ms);
        }
    };
    assert!(parse(guarded_for(day), &[64]).is_ok());
    assert!(parse(guarded_for(day + 1), &[64]).is_err());
    assert!(
        parse(
            |c| {
                c.set_duration_ms(day + 1);
            },
            &[64]
        )
        .is_ok()
    );
}

/// A guardrailed session may not reuse the name (the empty one included)
/// of one begun less than 5 minutes before, whether or not that one ended.
#[test]
fn guardrails_space_sessions_of_one_name() {
    let mut h = Harness::new();
    let cfg = |name: &str| {
        config(&[(64, false)], &[], |c| {
            c.set_enable_extra_guardrails(true);
            if !name.is_empty() {
                c.set_unique_session_name(name);
            }
        })
    };
    let start = |h: &mut Harness, uid: u32, name: &str| {
        let c = h.consumer(uid);
        let r = h.enable(c, cfg(name));
        let err = enable_error(h, c, r);
        if err.is_none() {
            h.ccall(c, ConsumerCall::FreeBuffers);
        }
        err
    };
    assert_eq!(start(&mut h, 1, "a"), None);
    let err = start(&mut h, 2, "a").expect("too soon");
    assert!(err.contains("enable_extra_guardrails"), "{err}");
    assert_eq!(start(&mut h, 3, "b"), None, "another name");
    assert_eq!(start(&mut h, 4, ""), None);
    assert!(start(&mut h, 5, "").is_some(), "the empty name counts too");
    // Without the guardrails, no spacing.
    let c = h.consumer(6);
    let r = h.enable(
        c,
        config(&[(64, false)], &[], |c| {
            c.set_unique_session_name("x");
        }),
    );
    assert_eq!(enable_error(&mut h, c, r), None);
    h.ccall(c, ConsumerCall::FreeBuffers);
    h.advance_ms(5 * 60 * 1000 + 1);
    assert_eq!(start(&mut h, 7, "a"), None, "5 minutes later");
}
